"""``Source``: a file an object cache entry is made from, opened at most once.

Filling an entry opens the source once: on S3 that is one GET, whose answer also tells the
object's size and ETag, which become the entry's version (see :mod:`pfio.cache.versions`),
so no HEAD is sent. A filesystem whose files do not tell their version is asked for a stat
after the file is opened.
"""

from __future__ import annotations

from typing import IO, Any

from ..fs.base import FS
from ..fs.stat import FileStat
from .identity import cache_key, source_identity
from .versions import opened_version, signature


class Source:
    """A file to cache: ``path`` on ``fs``, with its identity, and (once asked) its stat or
    the file opened to read it.

    Args:
        fs: the filesystem that holds the file.
        path: its path on ``fs``.
        identity: its identity, when already known (see :mod:`pfio.cache.identity`).
        open_options: backend options of the opening (e.g. S3's ``first_fetch``).
    """

    def __init__(self, fs: FS, path: str, identity: str | None = None,
                 open_options: dict[str, Any] | None = None) -> None:
        self.fs = fs
        self.path = path
        self.identity = identity if identity is not None else source_identity(fs, path)
        self.key = cache_key(self.identity)
        self.open_options = open_options or {}
        self._stat: FileStat | None = None
        self._remote: IO[bytes] | None = None
        self._version: dict[str, Any] | None = None

    def stat(self) -> FileStat:
        """The source's stat, asked once.

        Raises:
            FileNotFoundError: there is no such file.
            IsADirectoryError: it is a directory.
        """
        if self._stat is None:
            self._stat = self.fs.stat(self.path)
            if self._stat.isdir():
                raise IsADirectoryError(f"{self.identity} is a directory")
        return self._stat

    def open(self) -> IO[bytes]:
        """The source opened for reading (binary), once; it stays this object's until
        :meth:`take` hands it over or :meth:`close` closes it."""
        if self._remote is None:
            self._remote = self.fs.open(self.path, "rb", **self.open_options)
            self._version = opened_version(self._remote)
        return self._remote

    def take(self) -> IO[bytes]:
        """The file :meth:`open` opened (opened now if it was not): the caller closes it."""
        remote = self.open()
        self._remote = None
        return remote

    def version(self) -> dict[str, Any]:
        """The version of the bytes an entry made now holds: as the opened file told it,
        else from a stat of the source."""
        if self._version is None:
            self._version = signature(self.stat())
        return self._version

    def size(self) -> int:
        """The size of the version :meth:`version` describes."""
        return int(self.version()["size"])

    def close(self) -> None:
        """Close the opened file if this object still holds it."""
        remote, self._remote = self._remote, None
        if remote is not None:
            remote.close()
