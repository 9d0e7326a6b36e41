"""A two-way bridge between pfio and fsspec.

(a) :class:`PfioFileSystem`, an fsspec filesystem (protocol ``pfio``) over any pfio URL, so that
pandas, pyarrow and dask read through pfio (its S3 client, containers, cache and tracer)::

    pandas.read_parquet("pfio://s3/bucket/table.parquet")   # = s3://bucket/table.parquet
    pandas.read_csv("pfio://mem/store/x.csv")                # = mem://store/x.csv
    pandas.read_csv("pfio://file/abs/path/x.csv")            # = /abs/path/x.csv

    The first component after ``pfio://`` is the pfio scheme; the rest is that URL's
    netloc and path. The protocol is registered with fsspec through an entry point, so
    ``pfio://`` works without importing pfio first.

(b) :class:`FsspecFS`, a pfio filesystem over any installed fsspec implementation, so
``pfio.from_url("gs://...")``, ``"https://..."``, ``"memory://..."`` work through pfio's API and
error classes. pfio uses it for schemes it has no backend of its own for (see
:func:`pfio.registry.resolve`).
"""

from __future__ import annotations

import errno
import io
import os
import posixpath
import stat as _stat
from collections.abc import Iterator
from typing import IO, Any

import fsspec
from fsspec.spec import AbstractFileSystem

from .._uri import URI, parse_uri
from ..api import from_url, open_url
from ..fs.base import FS
from ..fs.modes import Mode
from ..fs.stat import FileStat
from ..fs.writers import AtomicSink, atomic_writer
from ..trace.redact import redact


def pfio_url(path: str) -> str:
    """The pfio URL of an fsspec ``pfio://scheme/netloc/path`` path."""
    rest = path[len("pfio://"):] if path.startswith("pfio://") else path.lstrip("/")
    scheme, _, remainder = rest.partition("/")
    if not scheme:
        raise ValueError(f"{path!r}: expected pfio://SCHEME/..., e.g. pfio://s3/bucket/key")
    if scheme == "file":
        return "/" + remainder
    return f"{scheme}://{remainder}"


class PfioFileSystem(AbstractFileSystem):
    """fsspec's view of pfio: paths are ``SCHEME/netloc/path`` (``pfio://`` optional)."""

    protocol = "pfio"
    root_marker = ""

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        path = str(path)
        if path.startswith("pfio://"):
            path = path[len("pfio://"):]
        return path.rstrip("/")

    def _split(self, path: str) -> tuple[FS, str]:
        url = pfio_url(self._strip_protocol(path)).rstrip("/")
        if parse_uri(url).path in ("", "/"):  # the top of a bucket or store: "s3://bucket"
            return from_url(url), ""
        parent, name = posixpath.split(url)
        return from_url(parent), name

    def _open(self, path: str, mode: str = "rb", block_size: Any = None,
              autocommit: bool = True, cache_options: Any = None, **kwargs: Any) -> IO[bytes]:
        return open_url(pfio_url(self._strip_protocol(path)), mode)

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        fs, name = self._split(path)
        with fs:
            if name and not fs.isdir(name):
                entries = [self._info(path, fs.stat(name))]
            else:
                listed = fs.subfs(name) if name else fs
                entries = [self._info(f"{path}/{st.filename}", st)
                           for st in listed.list(detail=True)]
        return entries if detail else [e["name"] for e in entries]

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        fs, name = self._split(path)
        with fs:
            return self._info(path, fs.stat(name) if name else FileStat.directory(""))

    @staticmethod
    def _info(path: str, st: FileStat) -> dict[str, Any]:
        return {"name": path.rstrip("/"), "size": st.size,
                "type": "directory" if st.isdir() else "file", "mtime": st.last_modified}

    def rm_file(self, path: str) -> None:
        fs, name = self._split(path)
        with fs:
            fs.remove(name)

    def _rm(self, path: str) -> None:
        self.rm_file(path)

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        fs, name = self._split(path)
        with fs:
            if create_parents:
                fs.makedirs(name, exist_ok=True)
            else:
                fs.mkdir(name)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        fs, name = self._split(path)
        with fs:
            fs.makedirs(name, exist_ok=exist_ok)

    def mv(self, path1: str, path2: str, **kwargs: Any) -> None:
        url1, url2 = (pfio_url(self._strip_protocol(p)) for p in (path1, path2))
        parent = posixpath.dirname(url1)
        if posixpath.dirname(url2) == parent:
            with from_url(parent) as fs:
                fs.rename(posixpath.basename(url1), posixpath.basename(url2))
            return
        super().mv(path1, path2, **kwargs)


class FsspecFS(FS):
    """A pfio filesystem over an fsspec implementation (``gs``, ``https``, ``memory``, ...).

    Writes are buffered in memory and stored with one ``pipe_file`` call when the file is
    closed, so that nothing partial is ever published.

    Args:
        protocol: the fsspec protocol.
        root: the path this filesystem is rooted at (``bucket/prefix`` for object stores).
        options: passed to ``fsspec.filesystem(protocol, **options)``.
    """

    def __init__(self, protocol: str, root: str = "", **options: Any) -> None:
        super().__init__()
        self.scheme = protocol
        self.root = root.rstrip("/")
        self.options = options
        self._fs: AbstractFileSystem | None = None

    @classmethod
    def from_uri(cls, uri: URI, **options: Any) -> FsspecFS:
        options.pop("create", None)
        return cls(uri.scheme, (uri.netloc + uri.path) if uri.netloc else uri.path, **options)

    @property
    def fs(self) -> AbstractFileSystem:
        """The fsspec filesystem (created in each process on first use)."""
        if self._fs is None or self.is_forked:
            self._fs = fsspec.filesystem(self.scheme, **self.options)
            self._pid = os.getpid()
        return self._fs

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fs": None}

    def __repr__(self) -> str:
        return f"FsspecFS({self.scheme!r}, root={redact(self.root)!r})"

    def _where(self, path: str) -> str:
        """``path`` as errors name it: its URL without credentials or a presigned query
        string (``https://`` URLs may carry both)."""
        return redact(self._describe(path))

    def _path(self, path: str) -> str:
        joined = posixpath.join(self.root, path) if path else self.root
        return posixpath.normpath(joined) if joined else joined

    def _open_binary(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        full = self._path(path)
        if mode.plus:
            raise io.UnsupportedOperation(f"{self.scheme}:// files cannot be opened in '+' modes")
        if mode.kind == "r":
            try:
                if self.fs.isdir(full):
                    raise IsADirectoryError(errno.EISDIR, "is a directory", self._where(path))
                return self.fs.open(full, "rb")
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, "no such file",
                                        self._where(path)) from None
        if mode.kind == "x" and self.fs.exists(full):
            raise FileExistsError(errno.EEXIST, "file exists", self._where(path))
        prefix = b""
        if mode.kind == "a" and self.fs.exists(full):
            prefix = self.fs.cat_file(full)
        sink = _FsspecSink(self, full, prefix, self._where(path))
        return atomic_writer(sink, mode, buffering, encoding, errors, newline)

    def list(self, path: str = "", recursive: bool = False,
             detail: bool = False) -> Iterator[Any]:
        top = self._path(path)
        if not self.fs.exists(top):
            raise FileNotFoundError(errno.ENOENT, "no such directory", self._where(path))
        if not self.fs.isdir(top):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._where(path))
        yield from self._list(top, "", recursive, detail)

    def _list(self, top: str, prefix: str, recursive: bool, detail: bool) -> Iterator[Any]:
        for info in sorted(self.fs.ls(top, detail=True), key=lambda i: i["name"]):
            name = prefix + posixpath.basename(info["name"].rstrip("/"))
            is_dir = info["type"] == "directory"
            yield _stat_of(name, info) if detail else (name + "/" if is_dir else name)
            if recursive and is_dir:
                yield from self._list(info["name"], name + "/", True, detail)

    def stat(self, path: str) -> FileStat:
        try:
            info = self.fs.info(self._path(path))
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, "no such file or directory",
                                    self._where(path)) from None
        return _stat_of(self._where(path), info)

    def mkdir(self, path: str, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        full = self._path(path)
        if self.fs.exists(full):
            raise FileExistsError(errno.EEXIST, "file exists", self._where(path))
        self.fs.mkdir(full, create_parents=False)

    def remove(self, path: str, recursive: bool = False) -> None:
        full = self._path(path)
        st = self.stat(path)
        if st.isdir() and not recursive and self.fs.ls(full):
            raise OSError(errno.ENOTEMPTY, "directory not empty", self._where(path))
        self.fs.rm(full, recursive=st.isdir())

    def rename(self, src: str, dst: str) -> None:
        self.stat(src)
        self.fs.mv(self._path(src), self._path(dst), recursive=True)


def _stat_of(name: str, info: dict[str, Any]) -> FileStat:
    mtime = info.get("mtime") or info.get("LastModified") or info.get("created")
    if hasattr(mtime, "timestamp"):
        mtime = mtime.timestamp()
    if info["type"] == "directory":
        return FileStat.directory(name, mtime)
    return FileStat(name, int(info.get("size") or 0), _stat.S_IFREG | 0o644, mtime)


class _FsspecSink(AtomicSink):
    """Buffers a file in memory; stores it at ``path`` of ``fs`` with one ``pipe_file`` on
    commit. ``name`` is what errors and the file's repr call it."""

    def __init__(self, fs: FsspecFS, path: str, prefix: bytes, name: str) -> None:
        super().__init__(name)
        self._fs = fs
        self._path = path
        self._buffer = io.BytesIO()
        self._buffer.write(prefix)

    def _write(self, b: Any) -> int:
        return self._buffer.write(b)

    def _commit(self) -> None:
        self._fs.fs.pipe_file(self._path, self._buffer.getvalue())

    def _discard(self) -> None:
        self._buffer = io.BytesIO()
