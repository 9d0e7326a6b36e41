"""``FsspecFS``: a pfio filesystem over any installed fsspec implementation.

``pfio.from_url("gs://...")``, ``"https://..."``, ``"memory://..."`` work through pfio's API
and error classes; pfio uses it for schemes it has no backend of its own for (see
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

from .._uri import URI, join_confined, netloc_user
from ..digests import sha256_hex
from ..trace.redact import redact
from .base import FS
from .modes import Mode
from .stat import FileStat
from .writers import AtomicSink, atomic_writer


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

    def identity(self, path: str) -> str:
        """The file's URL without credentials (see :meth:`FS.identity`) and, when the URL
        names a user (``ftp://user:password@host/...``), a digest of the user name, so that
        two users never share a cache entry. No secret is in it."""
        user = netloc_user(self.root.partition("/")[0])
        if user is None:
            return super().identity(path)
        reader = sha256_hex(user.encode("utf-8", "surrogatepass"))[:32]
        return f"{super().identity(path)}|reader={reader}"

    def _where(self, path: str) -> str:
        """``path`` as errors name it: its URL without credentials or a presigned query
        string (``https://`` URLs may carry both)."""
        return redact(self._describe(path))

    def _path(self, path: str) -> str:
        """The fsspec path of ``path``: below the root when there is one (a name climbing
        out of it raises :class:`PermissionError`, see :meth:`FS.subfs`)."""
        joined = join_confined(self.root, path, self._shown_root) if path and self.root \
            else path or self.root
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
                opened: IO[Any] = self.fs.open(full, "rb")
                return opened
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
    # fsspec's backends name it differently: seconds, or a datetime (s3fs, gcsfs)
    when: Any = info.get("mtime") or info.get("LastModified") or info.get("created")
    mtime: float | None = when.timestamp() if hasattr(when, "timestamp") else when
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
