"""The one resolver: from a URL to ``(filesystem, name)``.

:func:`pfio.from_url`, :func:`pfio.open_url`, the patches, the object cache and the ``pfio``
command all turn URLs into filesystems here. A path component ending in a container suffix
(``.zip``, ``.tar``, ``.tar.gz``, ``.tgz`` or a registered one, see
:func:`pfio.registry.register_container`) is opened as an archive, on any filesystem and
nested (``s3://b/outer.zip/inner.tar/x``).

Two modes:

* **shared** (the default): the filesystems returned belong to the resolver; the caller
  uses them and never closes them. Archives are opened once per process and kept in a
  bounded LRU keyed by the archive file's identity (:meth:`FS.identity`), so that opening
  ``s3://b/train.zip/m/00001.bin`` again costs one ranged read of the member, not a new
  read of the zip's directory. An archive evicted from the LRU releases its backing file
  once no member file opened from it is open; a child process (fork) starts with an empty
  LRU and opens archives again. Whether an archive file changed is checked as the
  filesystem holding it says (:attr:`FS.validation`): never, on every use, or at most every
  ``ttl`` seconds; a changed archive is opened again (and archives nested in it too).
* **private** (``shared=False``): the caller owns what is returned; closing it closes every
  archive and filesystem opened to reach it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .. import registry
from .._uri import URI, container_kind, parse_uri, split_container_path
from .base import FS

logger = logging.getLogger(__name__)

#: archives kept open per process by the shared mode (each holds its name index in memory)
MAX_SHARED_ARCHIVES = 64

Wrap = Callable[[FS], FS]


def locate(url: str | URI, *, shared: bool = True, wrap: Wrap | None = None,
           **options: Any) -> tuple[FS, str]:
    """The filesystem holding the file or directory ``url`` names, and its name there.

    Containers along the path are opened, the last component excepted:
    ``locate("s3://b/train.zip/m/1.bin")`` is ``(<the zip>, "m/1.bin")`` and
    ``locate("s3://b/data/train.zip")`` is ``(<S3 at data>, "train.zip")``. A URL naming the
    root of its filesystem gives ``(<the filesystem>, "")``.

    Args:
        url: a pfio URL (or a parsed :class:`~pfio.URI`).
        shared: return the resolver's shared filesystems (never close them) rather than new
            ones the caller owns and closes.
        wrap: applied to the filesystem created for the URL's scheme, before any archive on
            it is opened (:func:`pfio.from_url` reads through a cache this way).
        options: options of the backend (as for :func:`pfio.from_url`).

    Raises:
        ValueError: a malformed URL or an unknown scheme.
    """
    uri = url if isinstance(url, URI) else parse_uri(url)
    parent, name = uri.split()
    if not name:
        return open_directory(uri, shared=shared, wrap=wrap, **options)
    fs, inner = open_directory(parent, shared=shared, wrap=wrap, **options)
    return fs, f"{inner}/{name}" if inner else name


def open_directory(uri: URI, *, shared: bool = True, wrap: Wrap | None = None,
                   **options: Any) -> tuple[FS, str]:
    """The innermost filesystem on the way to the directory ``uri`` (every container on
    its path opened, the last component included) and the path left inside it.

    See :func:`locate` for ``shared``, ``wrap`` and ``options``.
    """
    outer, containers, _ = split_container_path(uri.path)
    if not containers:
        return _create(uri, wrap, options), ""
    base = _create(uri.with_path(outer), wrap, options)
    # PFIO 2.x's trace=True reaches the archives opened for the caller alone
    archive_options = {"trace": True} if options.get("trace") and not shared else {}
    return _descend(base, uri.path[len(outer):], shared, **archive_options)


def _create(uri: URI, wrap: Wrap | None, options: dict[str, Any]) -> FS:
    fs = registry.create(uri, **options)
    return wrap(fs) if wrap is not None else fs


def _descend(fs: FS, path: str, shared: bool, **archive_options: Any) -> tuple[FS, str]:
    """Open every container named along ``path`` on ``fs`` (those not shared with
    ``archive_options``); return the innermost filesystem and what is left of ``path``
    inside it."""
    base = fs
    pending: list[str] = []
    for part in path.split("/"):
        if not part:
            continue
        kind = container_kind(part)
        if kind is None:
            pending.append(part)
            continue
        member = "/".join(pending + [part])
        try:
            if shared:
                fs = _archives.get(fs, member, kind, owns_backing_fs=fs is base)
            else:
                archive = registry.container_factory(kind)(fs, member, **archive_options)
                archive.owns_backing_fs = True  # closing the archive closes what it is on
                fs = archive
        except IsADirectoryError:
            pending.append(part)  # a directory that merely looks like a container
            continue
        pending = []
    return fs, "/".join(pending)


def descend(fs: FS, path: str) -> tuple[FS, str]:
    """The innermost filesystem on the way to ``path`` on ``fs`` (every container along it
    opened, shared as in :func:`locate`) and the path left inside it. For callers that keep
    their own filesystem objects (the patches keep one per directory URL)."""
    return _descend(fs, path, shared=True)


def forget(url: str | URI) -> None:
    """Drop the shared archives at ``url`` and inside it: the file there was just written,
    so the next use opens it again whatever the validation policy says."""
    try:
        fs, name = locate(url)
        identity = fs.identity(name)
    except (OSError, ValueError):  # nothing that can be an open archive is there
        return
    _archives.discard_identity(identity)


def clear_shared_archives() -> None:
    """Release every archive the shared mode holds open (this process) and forget them."""
    _archives.clear()


def shared_archive_count() -> int:
    """How many archives the shared mode holds open in this process."""
    return len(_archives)


# -- the shared archives -----------------------------------------------------------------

def _version(fs: FS, path: str) -> tuple[Any, ...]:
    """What tells two versions of the file ``path`` apart: size, modification time, ETag."""
    st = fs.stat(path)
    return st.size, st.last_modified, getattr(st, "etag", None)


class _Entry:
    __slots__ = ("archive", "version", "checked", "policy", "ttl")

    def __init__(self, archive: FS, version: tuple[Any, ...] | None, policy: str,
                 ttl: float) -> None:
        self.archive = archive
        self.version = version
        self.checked = time.monotonic()
        self.policy = policy
        self.ttl = ttl

    def fresh(self) -> bool:
        """True when the policy says not to look at the source now."""
        return self.policy == "never" or \
            self.policy == "ttl" and time.monotonic() - self.checked < self.ttl


class _SharedArchives:
    """Archives opened once per process, keyed by ``(kind, identity)``, least recently used
    evicted beyond :data:`MAX_SHARED_ARCHIVES`."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, fs: FS, path: str, kind: str, owns_backing_fs: bool) -> FS:
        """The shared archive of ``kind`` at ``path`` on ``fs`` (opened on first use)."""
        key = (kind, fs.identity(path))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is not None:
            if entry.fresh():
                return entry.archive
            if _version(fs, path) == entry.version:
                entry.checked = time.monotonic()
                return entry.archive
            logger.info("%s changed; opening it again", key[1])
            self._discard(key)
        return self._open(fs, path, kind, key, owns_backing_fs)

    def _open(self, fs: FS, path: str, kind: str, key: tuple[str, str],
              owns_backing_fs: bool) -> FS:
        policy, ttl = fs.validation
        version = _version(fs, path) if policy != "never" else None
        archive = registry.container_factory(kind)(fs, path)
        archive.owns_backing_fs = owns_backing_fs
        entry = _Entry(archive, version, policy, ttl)
        evicted: list[_Entry] = []
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None:  # another thread opened it meanwhile
                evicted.append(entry)
                entry = existing
            else:
                self._entries[key] = entry
                while len(self._entries) > MAX_SHARED_ARCHIVES:
                    evicted.append(self._entries.popitem(last=False)[1])
        for old in evicted:
            _release(old.archive)
        return entry.archive

    def _discard(self, key: tuple[str, str]) -> None:
        """Forget the archive ``key`` and those opened inside it, releasing them."""
        self.discard_identity(key[1])

    def discard_identity(self, identity: str) -> None:
        """Forget the archives of the file ``identity`` (of any kind) and those opened inside
        them, releasing them."""
        nested = identity + "!/"
        with self._lock:
            dropped = [k for k in self._entries if k[1] == identity or k[1].startswith(nested)]
            entries = [self._entries.pop(k) for k in dropped]
        for entry in entries:
            _release(entry.archive)

    def clear(self) -> None:
        with self._lock:
            entries = list(self._entries.values())
            self._entries.clear()
        for entry in entries:
            _release(entry.archive)

    def forget_after_fork(self) -> None:
        """In a child process: start empty (the parent's files stay the parent's)."""
        self._reset()


def _release(archive: FS) -> None:
    """Let go of an archive others may still hold: archives of pfio release their backing
    file when idle and stay usable (:meth:`ArchiveFS.release`); other containers close."""
    getattr(archive, "release", archive.close)()


_archives = _SharedArchives()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_archives.forget_after_fork)

__all__ = ["MAX_SHARED_ARCHIVES", "clear_shared_archives", "descend", "forget", "locate",
           "open_directory", "shared_archive_count"]
