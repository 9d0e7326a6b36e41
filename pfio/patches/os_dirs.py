"""``os.stat``, ``os.lstat``, ``os.access``, ``os.listdir``, ``os.scandir`` and ``os.walk``
accept remote URIs (``lstat`` is ``stat``: remote filesystems have no symbolic links;
``access`` is true for an existing file, but not for ``X_OK``, nor ``W_OK`` inside an
archive, and for an existing directory).

A dataset class written for local disk lists its root with these; on a URL they list the
remote directory (an S3 prefix, a bucket root, a ``mem://`` store, a directory inside an
archive such as ``s3://b/train.zip/class_a``) and return strings that join back into URLs:
``os.scandir`` entries have ``name``, ``path`` (the URL), ``is_dir()``, ``is_file()`` and
``stat()`` (from the listing: no further request), and ``os.walk`` yields URLs as
``dirpath`` (it lists with ``os.scandir``, so it needs no patch of its own). ``os.stat``
gives an ``os.stat_result`` with the mode, size and modification time of the remote file, so
``os.path.getsize`` and friends work as well.

These run on every local ``stat`` and listing of the process, so they are plain functions
that send anything but a URL string to the original at the cost of one Python call.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from .._uri import parse_uri, split_container_path
from ..fs.stat import FileStat
from .locate import list_directory, stat_url
from .machinery import PatchSpec, define_target
from .targets import divert


def stat_result(st: FileStat) -> os.stat_result:
    """An ``os.stat_result`` with the mode, size and times of ``st`` (zero where unknown)."""
    mtime = st.last_modified or 0.0
    whole = int(mtime)
    return os.stat_result(
        (st.mode, 0, 0, 1, 0, 0, st.size, whole, whole, whole),
        {"st_atime": mtime, "st_mtime": mtime, "st_ctime": mtime,
         "st_atime_ns": int(mtime * 1e9), "st_mtime_ns": int(mtime * 1e9),
         "st_ctime_ns": int(mtime * 1e9)})


class RemoteDirEntry:
    """What ``os.scandir`` yields for a URL: the interface of ``os.DirEntry``."""

    __slots__ = ("name", "path", "_stat")

    def __init__(self, top: str, st: FileStat) -> None:
        self.name = st.filename.rstrip("/")
        self.path = _join(top, self.name)
        self._stat = st

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        """True for a directory (a prefix, an archive directory)."""
        return self._stat.isdir()

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        """True for a file (an object, an archive member)."""
        return not self._stat.isdir()

    def is_symlink(self) -> bool:
        """Always False: remote filesystems have no symbolic links."""
        return False

    def is_junction(self) -> bool:
        """Always False."""
        return False

    def inode(self) -> int:
        """Always 0: remote files have no inode number."""
        return 0

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        """The entry's ``os.stat_result``, from the listing."""
        return stat_result(self._stat)

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"<RemoteDirEntry {self.name!r}>"


class _Scandir:
    """The iterator ``os.scandir`` returns for a URL (also a context manager)."""

    def __init__(self, entries: Iterator[RemoteDirEntry]) -> None:
        self._entries = entries

    def __iter__(self) -> _Scandir:
        return self

    def __next__(self) -> RemoteDirEntry:
        return next(self._entries)

    def close(self) -> None:
        """Stop the iteration (nothing is held open)."""
        self._entries = iter(())

    def __enter__(self) -> _Scandir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _join(top: str, name: str) -> str:
    return top + name if top.endswith("/") else f"{top}/{name}"


def _listing(url: str) -> list[FileStat]:
    """The entries of the directory ``url`` (``FileNotFoundError``/``NotADirectoryError``
    as ``os`` raises them, and raised at the call, not at the first ``next``)."""
    try:
        return list_directory(url)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = url
        raise


def _scandir(url: str) -> _Scandir:
    return _Scandir(RemoteDirEntry(url, st) for st in _listing(url))


def _listdir(url: str) -> list[str]:
    return [st.filename.rstrip("/") for st in _listing(url)]


def _stat(url: str, *, dir_fd: Any = None, follow_symlinks: bool = True) -> os.stat_result:
    return stat_result(stat_url(url))


def _access(url: str, mode: int, *, dir_fd: Any = None, effective_ids: bool = False,
            follow_symlinks: bool = True) -> bool:
    """Whether ``url`` exists and allows ``mode``: a file is readable and writable (not
    inside an archive, which is read-only), a directory searchable too."""
    try:
        st = stat_url(url)
    except (FileNotFoundError, NotADirectoryError, PermissionError, ValueError):
        return False
    if mode & os.W_OK and split_container_path(parse_uri(url).path)[1]:
        return False
    return not (mode & os.X_OK and not st.isdir())


define_target("os", [
    PatchSpec("os", "stat", replace=divert(_stat)),
    PatchSpec("os", "lstat", replace=divert(_stat)),
    PatchSpec("os", "access", replace=divert(_access)),
    PatchSpec("os", "listdir", replace=divert(_listdir)),
    PatchSpec("os", "scandir", replace=divert(_scandir)),
])

__all__ = ["RemoteDirEntry", "stat_result"]
