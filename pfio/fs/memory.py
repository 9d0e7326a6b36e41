"""``MemoryFS``: an in-memory filesystem for ``mem://`` URLs.

``mem://NAME/path`` addresses the store called ``NAME`` of the current process; every
``MemoryFS`` with the same name sees the same files. Stores are thread-safe. They live in
process memory: a forked child starts with a copy of its parent's stores, a spawned process
with empty ones. Handy for tests and for scratch data.

Writes create missing parent directories (as object stores do); ``mkdir`` needs the parent,
as ``os.mkdir`` does.
"""

from __future__ import annotations

import errno
import io
import posixpath
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

from .._uri import URI, join_confined
from .base import FS, warn_unknown_options
from .modes import Mode
from .stat import FileStat
from .writers import AtomicSink, MemoryReader, atomic_writer


class _File:
    __slots__ = ("data", "mtime")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.mtime = time.time()


class _Dir(dict[str, "_File | _Dir"]):
    """A directory: name -> _File | _Dir."""

    __slots__ = ("mtime",)

    def __init__(self) -> None:
        super().__init__()
        self.mtime = time.time()


class _Store:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.top = _Dir()


_stores: dict[str, _Store] = {}
_stores_lock = threading.Lock()


def _store(name: str) -> _Store:
    with _stores_lock:
        store = _stores.get(name)
        if store is None:
            store = _stores[name] = _Store()
        return store


def _parts(path: str) -> list[str]:
    """Components of a path inside a store; ``..`` never climbs above the store's top."""
    normalized = posixpath.normpath("/" + path)
    return [p for p in normalized.split("/") if p]


class MemoryFS(FS):
    """An in-memory filesystem: store ``name``, rooted at ``root``.

    Args:
        name: the store's name (the netloc of ``mem://NAME/...``); ``""`` is the default.
        root: the directory of the store this filesystem is rooted at.
        create: create ``root`` when it does not exist.
    """

    scheme = "mem"
    validation = ("open", 0.0)  # a stat is a dictionary look-up: look at every use

    def __init__(self, name: str = "", root: str = "", create: bool = False,
                 **options: Any) -> None:
        super().__init__()
        warn_unknown_options("MemoryFS", options)
        self.name = name
        self.root = root.strip("/")
        self._store = _store(name)
        if create and self.root:
            MemoryFS(name).makedirs(self.root, exist_ok=True)

    @classmethod
    def from_uri(cls, uri: URI, **options: Any) -> MemoryFS:
        """The filesystem of ``mem://NAME/root``."""
        return cls(uri.netloc, uri.path, **options)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_store"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._store = _store(self.name)

    def __repr__(self) -> str:
        return f"MemoryFS(name={self.name!r}, root={self.root!r})"

    def _describe(self, path: str) -> str:
        return self._url(self._split(path))

    def _url(self, parts: list[str]) -> str:
        return f"mem://{self.name}/" + "/".join(parts)

    def _split(self, path: str) -> list[str]:
        """The components of ``path`` in the store, below ``root``.

        Raises:
            PermissionError: ``path`` climbs out of ``root`` (see :meth:`FS.subfs`).
        """
        return _parts(join_confined(self.root, path, self._shown_root))

    def _lookup(self, parts: list[str]) -> _File | _Dir:
        node: _File | _Dir = self._store.top
        for i, part in enumerate(parts):
            if not isinstance(node, _Dir):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._url(parts[:i]))
            try:
                node = node[part]
            except KeyError:
                raise FileNotFoundError(
                    errno.ENOENT, "no such file or directory", self._url(parts)
                ) from None
        return node

    def _parent(self, parts: list[str], create: bool) -> _Dir:
        node = self._store.top
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                if not create:
                    raise FileNotFoundError(
                        errno.ENOENT, "no such directory", self._url(parts[: i + 1])
                    )
                child = node[part] = _Dir()
            if not isinstance(child, _Dir):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._url(parts[:i + 1]))
            node = child
        return node

    # -- files --------------------------------------------------------------------------

    def _open_binary(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        parts = self._split(path)
        if mode.plus:
            raise io.UnsupportedOperation("mem:// files cannot be opened in update ('+') modes")
        with self._store.lock:
            try:
                node = self._lookup(parts)
            except FileNotFoundError:
                if mode.kind == "r":
                    raise
                node = None
            if isinstance(node, _Dir) or not parts:
                raise IsADirectoryError(errno.EISDIR, "is a directory", self._url(parts))
            if mode.kind == "r" and node is not None:  # (a missing file raised above)
                return MemoryReader(node.data, self._url(parts))
            if mode.kind == "x" and node is not None:
                raise FileExistsError(errno.EEXIST, "file exists", self._url(parts))
            prefix = node.data if mode.kind == "a" and node is not None else b""
        sink = _MemorySink(self, parts, prefix, exclusive=mode.kind == "x")
        return atomic_writer(sink, mode, buffering, encoding, errors, newline)

    def _publish(self, parts: list[str], data: bytes, exclusive: bool) -> None:
        with self._store.lock:
            parent = self._parent(parts, create=True)
            existing = parent.get(parts[-1])
            if isinstance(existing, _Dir):
                raise IsADirectoryError(errno.EISDIR, "is a directory", self._url(parts))
            if exclusive and existing is not None:
                raise FileExistsError(errno.EEXIST, "file exists", self._url(parts))
            parent[parts[-1]] = _File(data)

    # -- inspecting ---------------------------------------------------------------------

    def list(self, path: str = "", recursive: bool = False,
             detail: bool = False) -> Iterator[Any]:
        parts = self._split(path)
        with self._store.lock:
            node = self._lookup(parts)
            if not isinstance(node, _Dir):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._url(parts))
            entries = list(_walk(node, "", recursive))
        for name, child in entries:
            if detail:
                yield _stat(child, name)
            else:
                yield name + "/" if isinstance(child, _Dir) else name

    def stat(self, path: str) -> FileStat:
        parts = self._split(path)
        with self._store.lock:
            return _stat(self._lookup(parts), self._url(parts))

    def isdir(self, path: str) -> bool:
        try:
            with self._store.lock:
                return isinstance(self._lookup(self._split(path)), _Dir)
        except (FileNotFoundError, NotADirectoryError):
            return False

    # -- changing -----------------------------------------------------------------------

    def mkdir(self, path: str, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        parts = self._split(path)
        with self._store.lock:
            if not parts:
                raise FileExistsError(errno.EEXIST, "file exists", self._url(parts))
            parent = self._parent(parts, create=False)
            if parts[-1] in parent:
                raise FileExistsError(errno.EEXIST, "file exists", self._url(parts))
            parent[parts[-1]] = _Dir()

    def remove(self, path: str, recursive: bool = False) -> None:
        parts = self._split(path)
        with self._store.lock:
            node = self._lookup(parts)
            if not parts:
                raise PermissionError(errno.EPERM, "cannot remove the top of a store",
                                      self._url(parts))
            if isinstance(node, _Dir) and node and not recursive:
                raise OSError(errno.ENOTEMPTY, "directory not empty", self._url(parts))
            del self._parent(parts, create=False)[parts[-1]]

    def rename(self, src: str, dst: str) -> None:
        src_parts, dst_parts = self._split(src), self._split(dst)
        with self._store.lock:
            node = self._lookup(src_parts)
            if not src_parts or not dst_parts:
                raise PermissionError(errno.EPERM, "cannot rename the top of a store",
                                      self._url(src_parts))
            if dst_parts[: len(src_parts)] == src_parts and isinstance(node, _Dir):
                raise OSError(errno.EINVAL, "cannot move a directory into itself",
                              self._url(dst_parts))
            parent = self._parent(dst_parts, create=True)
            target = parent.get(dst_parts[-1])
            if isinstance(target, _Dir) and not isinstance(node, _Dir):
                raise IsADirectoryError(errno.EISDIR, "is a directory", self._url(dst_parts))
            if isinstance(target, _Dir) and target:
                raise OSError(errno.ENOTEMPTY, "directory not empty", self._url(dst_parts))
            if isinstance(node, _Dir) and isinstance(target, _File):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._url(dst_parts))
            del self._parent(src_parts, create=False)[src_parts[-1]]
            parent[dst_parts[-1]] = node


def _walk(node: _Dir, prefix: str, recursive: bool) -> Iterator[tuple[str, _File | _Dir]]:
    for name, child in sorted(node.items()):
        yield prefix + name, child
        if recursive and isinstance(child, _Dir):
            yield from _walk(child, prefix + name + "/", True)


def _stat(node: _File | _Dir, name: str) -> FileStat:
    if isinstance(node, _Dir):
        return FileStat.directory(name, node.mtime)
    return FileStat(name, len(node.data), last_modified=node.mtime)


class _MemorySink(AtomicSink):
    def __init__(self, fs: MemoryFS, parts: list[str], prefix: bytes, exclusive: bool) -> None:
        super().__init__(fs._url(parts))
        self._fs = fs
        self._parts = parts
        self._buffer = io.BytesIO()
        self._buffer.write(prefix)
        self._exclusive = exclusive

    def _write(self, b: Any) -> int:
        return self._buffer.write(b)

    def _commit(self) -> None:
        self._fs._publish(self._parts, self._buffer.getvalue(), self._exclusive)

    def _discard(self) -> None:
        self._buffer = io.BytesIO()
