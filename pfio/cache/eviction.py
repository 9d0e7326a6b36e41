"""Keeping an object cache directory under its byte limit.

Entries are evicted least recently used first (a hit sets the entry file's mtime). A file in
use is never deleted: users hold a shared ``flock`` on it, and the evictor deletes only a
file on which it gets an exclusive lock without waiting, while it also holds the entry's
download lock (so no download is publishing the same key at that moment). Scans also sweep
what killed processes left: partial downloads (``*.part`` files whose download lock nobody
holds) at once, temporary metadata and other temporary files (``*.tmp``, ``*.pfio-tmp``) once
they are older than :data:`STALE_AFTER`.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Iterator

from .key_locks import key_lock
from .private_dir import NOFOLLOW

logger = logging.getLogger(__name__)

#: suffixes of entry files (a whole copy, a block file): what counts against the limit
ENTRY_SUFFIXES = (".obj", ".blk")
#: suffixes of temporary files, written and renamed at once by a live process
TEMPORARY_SUFFIXES = (".tmp", ".pfio-tmp")
#: seconds after which a temporary file is taken for the leftover of a killed process
STALE_AFTER = 600.0


@contextlib.contextmanager
def try_flock(path: str, flags: int = os.O_RDONLY) -> Iterator[int | None]:
    """Open ``path`` and take an exclusive ``flock`` without waiting: yield the descriptor,
    or None when the file is missing or someone else holds a lock on it."""
    try:
        fd = os.open(path, flags | NOFOLLOW, 0o600)
    except FileNotFoundError:
        yield None
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield None
            return
        yield fd
    finally:
        os.close(fd)


def _same_file(fd: int, path: str) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_ino, st.st_dev) == (mine.st_ino, mine.st_dev)


def remove_unused(entry_path: str) -> bool:
    """Delete the entry file ``entry_path`` and its metadata unless a process uses it or is
    publishing it; True when deleted."""
    prefix = entry_path[:entry_path.rindex(".")]
    with key_lock(prefix, wait=False) as download_lock:
        if not download_lock:
            return False
        with try_flock(entry_path) as fd:
            if fd is None or not _same_file(fd, entry_path):
                return False
            os.unlink(entry_path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(prefix + ".meta")
            return True


def scan(root: str) -> tuple[int, list[tuple[int, int, str]]]:
    """The bytes used by the entries under ``root`` (allocated blocks, so sparse block files
    count what they hold) and the entries as ``(mtime_ns, bytes, path)``; leftovers of killed
    processes are removed on the way."""
    total = 0
    entries: list[tuple[int, int, str]] = []
    try:
        shards = [d.path for d in os.scandir(root) if d.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return 0, []
    stale = time.time() - STALE_AFTER
    for shard in shards:
        for item in os.scandir(shard):
            name = item.name
            if name.endswith(".part"):
                _remove_abandoned(item.path)
            elif name.endswith(ENTRY_SUFFIXES):
                try:
                    st = item.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                used = st.st_blocks * 512
                total += used
                entries.append((st.st_mtime_ns, used, item.path))
            elif name.endswith(TEMPORARY_SUFFIXES):
                _remove_stale(item, stale)
    return total, entries


def _remove_abandoned(path: str) -> None:
    """Remove the partial download ``path`` (``<shard>/<key>.<pid>.<random>.part``) unless
    a download of its key is going on: a downloader holds the key's download lock from
    before it creates the file until it has renamed it."""
    shard, name = os.path.split(path)
    with key_lock(os.path.join(shard, name.split(".", 1)[0]), wait=False) as download_lock:
        if not download_lock:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
            logger.info("removed an abandoned partial download %s", path)


def _remove_stale(item: os.DirEntry[str], stale: float) -> None:
    with contextlib.suppress(FileNotFoundError):
        if item.stat(follow_symlinks=False).st_mtime < stale:
            os.unlink(item.path)
            logger.info("removed a temporary file left behind: %s", item.path)


def evict(root: str, max_bytes: int) -> int:
    """Evict least recently used entries under ``root`` until they use at most ``max_bytes``
    (entries in use stay); return the bytes used afterwards. Only one process evicts at a
    time; the others return the current usage without evicting."""
    with try_flock(os.path.join(root, ".evict.lock"), os.O_RDWR | os.O_CREAT) as lock:
        total, entries = scan(root)
        if lock is None or total <= max_bytes:
            return total
        entries.sort()
        for _, used, path in entries:
            if total <= max_bytes:
                break
            if remove_unused(path):
                total -= used
                logger.debug("evicted %s (%d bytes)", path, used)
        return total
