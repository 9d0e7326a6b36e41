"""``HTTPCachedFS``: any filesystem, its files read through an HTTP cache server.

A file opened for reading is looked up on the server at ``url + <its URL>``; on a miss it is
read whole from the wrapped filesystem and, when not larger than ``max_cache_size``, sent
to the server for next time. Everything else (writes, listing, stat, removal) goes to the
wrapped filesystem: the server is never told that a file changed, so use a new ``url`` when
the data does.

Entries are named as PFIO 2.x named them (see :func:`canonical_name`), so PFIO 2.x and pfio
share the entries of one cache server.
"""

from __future__ import annotations

import copy
import os
import urllib.parse
from typing import IO, Any

from ..containers.zip import Zip
from ..fs.base import FS
from ..fs.local import Local
from ..fs.modes import Mode
from ..fs.s3 import S3
from ..fs.writers import MemoryReader
from .cached_fs import CachedFS
from .http_cache import HTTPConnector

#: characters left as they are in entry names (what PFIO 2.x sent unquoted)
_SAFE = "/:@!$&'()*+,;=-._~"


def canonical_name(fs: FS, path: str) -> str:
    """The name of the cache entry of ``path`` on ``fs``, as PFIO 2.x named it:
    ``file://<absolute path>`` (local), ``s3://<endpoint host>/<bucket>/<key>`` (S3),
    ``<archive's name>/pfio-zipfs/<member>`` (zip); on other filesystems, the file's URL.
    The path is confined to the filesystem's root as reads confine it (see :meth:`FS.subfs`),
    so an entry is named after the file that is read.

    Raises:
        PermissionError: ``path`` climbs out of the filesystem's root.
    """
    if isinstance(fs, Local):
        full = fs._path(path) if fs._cwd else os.path.join(fs.cwd, path)
        return "file:/" + os.path.normpath(full)
    if isinstance(fs, Zip):
        return f"{canonical_name(fs.backend, fs.file_path)}/pfio-zipfs/{fs._key(path)}"
    if isinstance(fs, S3):
        endpoint = fs.endpoint
        if endpoint and "://" not in endpoint:
            endpoint = "http://" + endpoint
        host = urllib.parse.urlsplit(endpoint).hostname if endpoint else "undefined"
        key = fs._key(path)
        return f"s3://{host}/{fs.bucket}/{key}"
    return fs._describe(path)


class HTTPCachedFS(CachedFS):
    """Reads ``fs`` through the HTTP cache server at ``url``.

    Args:
        url: the prefix of the cache entries' URLs (``http://host:port/prefix/``).
        fs: the filesystem to read through the cache (not itself an ``HTTPCachedFS``).
        max_cache_size: files larger than this (bytes) are read from ``fs`` and not cached.
        bearer_token_path: a file holding a bearer token for the server.

    Raises:
        ValueError: ``fs`` is already an ``HTTPCachedFS``, or ``url`` is not an http URL.
    """

    def __init__(self, url: str, fs: FS, max_cache_size: int = 1024 * 1024 * 1024,
                 bearer_token_path: str | None = None) -> None:
        if isinstance(fs, HTTPCachedFS):
            raise ValueError("an HTTPCachedFS cannot wrap another HTTPCachedFS")
        FS.__init__(self)
        self.fs = fs
        self.scheme = fs.scheme
        self.url = url if url.endswith("/") else url + "/"
        self.max_cache_size = max_cache_size
        self.conn = HTTPConnector(self.url, bearer_token_path)

    def __repr__(self) -> str:
        return f"HTTPCachedFS({self.conn._shown!r}, {self.fs!r})"

    def _entry(self, path: str) -> str:
        """The URL suffix of the entry of ``path`` (its :func:`canonical_name`, with
        characters a URL cannot carry escaped)."""
        return urllib.parse.quote(canonical_name(self.fs, path), safe=_SAFE)

    def _open_binary(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        entry = self._entry(path)
        data = self.conn.get(entry)
        if data is None:
            with self.fs.open(path, "rb") as f:
                data = f.read()
            if len(data) <= self.max_cache_size:
                self.conn.put(entry, data)
        return MemoryReader(data)

    def _forget(self, path: str) -> None:
        """Nothing: the server keeps no index to forget entries by."""

    def subfs(self, path: str) -> HTTPCachedFS:
        """The same cache over ``fs.subfs(path)`` (entries are named by full URLs, so they
        are shared with this filesystem)."""
        sub = copy.copy(self)
        sub.fs = self.fs.subfs(path)
        return sub


__all__ = ["HTTPCachedFS", "canonical_name"]
