"""An in-memory stand-in for ``hdfs_native.Client``, for tests without an HDFS cluster.

:class:`StandinClient` has the methods of ``hdfs_native.Client`` that :class:`pfio.fs.hdfs.Hdfs`
calls, with the same signatures, and keeps the rules of an HDFS name node as the native
client reports them:

* errors come as hdfs-native raises them: ``FileNotFoundError``/``FileExistsError``/
  ``IsADirectoryError`` for what it maps itself, and ``RuntimeError("RPC error: <Java class>
  <message>")`` for the other name node exceptions (``AccessControlException``,
  ``ParentNotDirectoryException``, ``PathIsNotEmptyDirectoryException``, ...);
* paths are absolute; a file being written exists (empty) until its writer is closed;
* ``delete`` of a missing path returns False; listing a file lists the file itself;
* ``rename`` follows HDFS's ``rename2``: the destination's parent must exist, a directory
  cannot move under itself, an existing destination needs ``overwrite``, must be of the
  same kind and, for a directory, empty;
* permission bits are checked for users other than the superuser ``hdfs``.

Stores are named and shared in the process (as ``mem://`` stores are), so a pickled
:class:`StandinFactory` finds the same files after unpickling.

>>> client = StandinClient(StandinStore())
>>> with client.create("/a/b") as w:
...     _ = w.write(b"data")
>>> client.read("/a/b").read()
b'data'
"""

from __future__ import annotations

import os
import posixpath
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

SUPERUSER = "hdfs"


@dataclass
class StandinStatus:
    """The fields of ``hdfs_native.FileStatus``."""

    path: str
    length: int
    isdir: bool
    permission: int
    owner: str
    group: str
    modification_time: int
    access_time: int
    replication: int | None
    blocksize: int | None


@dataclass
class _Node:
    isdir: bool
    owner: str
    permission: int
    data: bytes = b""
    mtime: int = field(default_factory=lambda: int(time.time() * 1000))
    children: dict[str, _Node] = field(default_factory=dict)


class StandinStore:
    """The namespace of one stand-in cluster: a tree of nodes under ``/``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.top = _Node(True, SUPERUSER, 0o777)


_stores: dict[str, StandinStore] = {}
_stores_lock = threading.Lock()


def named_store(name: str) -> StandinStore:
    """The store called ``name`` in this process (created empty on first use)."""
    with _stores_lock:
        return _stores.setdefault(name, StandinStore())


def _rpc(java_class: str, message: str) -> RuntimeError:
    return RuntimeError(f"RPC error: {java_class} {message}")


def _parts(path: str) -> list[str]:
    if not path.startswith("/"):
        raise _rpc("org.apache.hadoop.fs.InvalidPathException", f"Invalid path name {path}")
    return [p for p in posixpath.normpath(path).split("/") if p]


class StandinReader:
    """The reading side of ``hdfs_native.FileReader``: a snapshot taken at open."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    @property
    def size(self) -> int:
        return len(self._data)

    def seek(self, offset: int, whence: int = 0) -> None:
        base = {0: 0, 1: self._pos, 2: len(self._data)}[whence]
        if base + offset > len(self._data):
            raise RuntimeError("Cannot seek beyond the end of a file")
        self._pos = base + offset

    def tell(self) -> int:
        return self._pos

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size < 0 else min(len(self._data), self._pos + size)
        chunk = self._data[self._pos:end]
        self._pos = end
        return chunk

    def read_range(self, offset: int, len: int) -> bytes:  # noqa: A002 - hdfs-native's name
        if offset + len > self.size:
            raise RuntimeError("Not enough data returned from DataNode")
        return self._data[offset:offset + len]

    def close(self) -> None:
        """Nothing to release."""


class StandinWriter:
    """The writing side of ``hdfs_native.FileWriter``: data lands on ``close``."""

    def __init__(self, client: StandinClient, node: _Node) -> None:
        self._client = client
        self._node = node
        self._chunks: list[bytes] = []
        self._closed = False

    def write(self, buf: Any) -> int:
        if self._closed:
            raise RuntimeError("Block writer is closed")
        data = bytes(buf)
        self._chunks.append(data)
        return len(data)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._client.store.lock:
            self._node.data += b"".join(self._chunks)
            self._node.mtime = int(time.time() * 1000)

    def __enter__(self) -> StandinWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StandinClient:
    """An in-memory ``hdfs_native.Client`` over ``store``, acting as ``user``."""

    def __init__(self, store: StandinStore, user: str = "pfio") -> None:
        self.store = store
        self.user = user
        #: the process that created this client (tests check it is recreated after fork)
        self.created_pid = os.getpid()

    # -- walking and permission checks ---------------------------------------------------

    def _allowed(self, node: _Node, bit: int) -> bool:
        if self.user == SUPERUSER:
            return True
        shift = 6 if node.owner == self.user else 0
        return bool(node.permission & (bit << shift))

    def _check(self, node: _Node, bit: int, path: str) -> None:
        if not self._allowed(node, bit):
            raise _rpc("org.apache.hadoop.security.AccessControlException",
                       f"Permission denied: user={self.user}, access={bit:o}, inode=\"{path}\"")

    def _find(self, path: str) -> _Node | None:
        """The node at ``path``; None if it or an ancestor is missing or not a directory.
        Every ancestor must be traversable (x)."""
        node = self.store.top
        for part in _parts(path):
            if not node.isdir:
                return None
            self._check(node, 1, path)
            child = node.children.get(part)
            if child is None:
                return None
            node = child
        return node

    def _parent(self, path: str, create: bool) -> tuple[_Node, str]:
        """The directory that holds ``path`` and the last component."""
        parts = _parts(path)
        if not parts:
            raise _rpc("org.apache.hadoop.fs.InvalidPathException", "the root has no parent")
        node = self.store.top
        for i, part in enumerate(parts[:-1]):
            self._check(node, 1, path)
            child = node.children.get(part)
            if child is None:
                if not create:
                    raise _rpc("java.io.FileNotFoundException",
                               f"Parent directory doesn't exist: /{'/'.join(parts[:i + 1])}")
                self._check(node, 2, path)
                child = node.children[part] = _Node(True, self.user, 0o755)
            if not child.isdir:
                raise _rpc("org.apache.hadoop.fs.ParentNotDirectoryException",
                           f"/{'/'.join(parts[:i + 1])} (is not a directory)")
            node = child
        self._check(node, 1, path)
        return node, parts[-1]

    def _status(self, node: _Node, path: str) -> StandinStatus:
        return StandinStatus(path, len(node.data), node.isdir, node.permission, node.owner,
                             "supergroup", node.mtime, node.mtime, None if node.isdir else 1,
                             None if node.isdir else 128 << 20)

    # -- the hdfs_native.Client methods ------------------------------------------------

    def get_file_info(self, path: str) -> StandinStatus:
        with self.store.lock:
            node = self._find(path)
            if node is None:
                raise FileNotFoundError(f"file not found: {path}")
            return self._status(node, posixpath.normpath(path))

    def list_status(self, path: str, recursive: bool = False) -> Iterator[StandinStatus]:
        with self.store.lock:
            node = self._find(path)
            if node is None:
                raise FileNotFoundError(f"file not found: {path}")
            base = posixpath.normpath(path)
            if not node.isdir:
                return iter([self._status(node, base)])
            self._check(node, 4, path)
            return iter(list(self._walk(node, base, recursive)))

    def _walk(self, node: _Node, base: str, recursive: bool) -> Iterator[StandinStatus]:
        for name in sorted(node.children):
            child = node.children[name]
            full = posixpath.join(base, name)
            yield self._status(child, full)
            if recursive and child.isdir:
                yield from self._walk(child, full, True)

    def read(self, path: str) -> StandinReader:
        with self.store.lock:
            node = self._find(path)
            if node is None:
                raise FileNotFoundError(f"file not found: {path}")
            if node.isdir:
                raise _rpc("java.io.FileNotFoundException", f"Path is not a file: {path}")
            self._check(node, 4, path)
            return StandinReader(node.data)

    def create(self, path: str, write_options: Any = None) -> StandinWriter:
        overwrite = bool(getattr(write_options, "overwrite", False))
        create_parent = getattr(write_options, "create_parent", True) is not False
        permission = getattr(write_options, "permission", None) or 0o644
        with self.store.lock:
            parent, name = self._parent(path, create_parent)
            existing = parent.children.get(name)
            if existing is not None and existing.isdir:
                raise _rpc("org.apache.hadoop.fs.FileAlreadyExistsException",
                           f"{path} already exists as a directory")
            if existing is not None and not overwrite:
                raise FileExistsError(f"file already exists: {path}")
            self._check(parent, 2, path)
            node = parent.children[name] = _Node(False, self.user, permission)
            return StandinWriter(self, node)

    def append(self, path: str) -> StandinWriter:
        with self.store.lock:
            node = self._find(path)
            if node is None:
                raise FileNotFoundError(f"file not found: {path}")
            if node.isdir:
                raise _rpc("java.io.FileNotFoundException", f"{path} is not a file")
            self._check(node, 2, path)
            return StandinWriter(self, node)

    def mkdirs(self, path: str, permission: int = 0o755, create_parent: bool = False) -> None:
        with self.store.lock:
            parts = _parts(path)
            if not parts:
                return
            parent, name = self._parent(path, create_parent)
            existing = parent.children.get(name)
            if existing is not None:
                if not existing.isdir:
                    raise _rpc("org.apache.hadoop.fs.FileAlreadyExistsException",
                               f"Path is not a directory: {path}")
                return
            self._check(parent, 2, path)
            parent.children[name] = _Node(True, self.user, permission)

    def rename(self, src: str, dst: str, overwrite: bool = False) -> None:
        with self.store.lock:
            src_parts, dst_parts = _parts(src), _parts(dst)
            node = self._find(src)
            if node is None or not src_parts:
                raise _rpc("java.io.FileNotFoundException", f"rename source {src} is not found.")
            if src_parts == dst_parts:
                raise _rpc("org.apache.hadoop.fs.FileAlreadyExistsException",
                           f"The source {src} and destination {dst} are the same")
            if dst_parts[:len(src_parts)] == src_parts:
                raise _rpc("java.io.IOException", f"Rename destination {dst} is a directory "
                           f"or file under source {src}")
            src_parent, src_name = self._parent(src, False)
            dst_parent, dst_name = self._parent(dst, False)
            self._check(src_parent, 2, src)
            self._check(dst_parent, 2, dst)
            target = dst_parent.children.get(dst_name)
            if target is not None:
                if target.isdir != node.isdir:
                    raise _rpc("java.io.IOException",
                               f"Source {src} and destination {dst} must both be directories")
                if not overwrite:
                    raise _rpc("org.apache.hadoop.fs.FileAlreadyExistsException",
                               f"rename destination {dst} already exists")
                if target.children:
                    raise _rpc("java.io.IOException",
                               f"rename destination directory is not empty: {dst}")
            del src_parent.children[src_name]
            dst_parent.children[dst_name] = node

    def delete(self, path: str, recursive: bool = False) -> bool:
        with self.store.lock:
            parts = _parts(path)
            node = self._find(path)
            if node is None or not parts:
                return False
            if node.isdir and node.children and not recursive:
                raise _rpc("org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
                           f"`{path} is non empty': Directory is not empty")
            parent, name = self._parent(path, False)
            self._check(parent, 2, path)
            del parent.children[name]
            return True

    def set_permission(self, path: str, permission: int) -> None:
        with self.store.lock:
            node = self._find(path)
            if node is None:
                raise FileNotFoundError(f"file not found: {path}")
            if self.user not in (SUPERUSER, node.owner):
                raise _rpc("org.apache.hadoop.security.AccessControlException",
                           f"Permission denied: user={self.user} is not the owner of {path}")
            node.permission = permission


@dataclass(frozen=True)
class StandinFactory:
    """A picklable client factory for :class:`pfio.fs.hdfs.Hdfs` (its ``client_factory``
    option): every call returns a :class:`StandinClient` over the store called ``store``."""

    store: str = "default"
    user: str = "pfio"

    def __call__(self, target: Any = None) -> StandinClient:
        return StandinClient(named_store(self.store), self.user)
