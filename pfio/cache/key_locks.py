"""The download lock of an object cache key, held by whoever publishes or removes its entry.

On Linux the lock is one byte of the shard directory's ``.locks`` file, locked with an open
file description lock (``F_OFD_SETLKW``) at an offset taken from the key: the file is made
once per shard directory, so a miss creates no lock file of its own (creating a file costs
more than the rest of a miss's bookkeeping on some disks), and keys never share a lock.
Such locks belong to the descriptor, so threads of one process exclude each other as
processes do, and a killed holder's lock goes with its descriptors. Elsewhere the lock is an
``flock`` on a ``<key>.lock`` file of its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import sys
from collections.abc import Iterator

from .private_dir import NOFOLLOW

#: the file of a shard directory whose bytes are the locks of its keys (Linux)
SHARD_LOCKS = ".locks"

_OFD_WAIT = getattr(fcntl, "F_OFD_SETLKW", None)
_OFD_TRY = getattr(fcntl, "F_OFD_SETLK", None)
#: ``struct flock`` of 64-bit Linux: type, whence, start, length, pid (0 for OFD locks)
_FLOCK = "@hhqqi4x"
#: byte locks serve where the kernel has them and ``struct flock`` has the layout above
BYTE_LOCKS = (sys.platform == "linux" and _OFD_WAIT is not None
              and struct.calcsize(_FLOCK) == 32 and sys.maxsize > 2**32)


def lock_path(prefix: str) -> str:
    """The file that holds the lock of the entry ``prefix`` (``<shard>/<key>``)."""
    if BYTE_LOCKS:
        return os.path.join(os.path.dirname(prefix), SHARD_LOCKS)
    return prefix + ".lock"


def _offset(prefix: str) -> int:
    """The byte of the shard's lock file that stands for the key (60 bits of its hash)."""
    return int(os.path.basename(prefix)[:15], 16)


def _lock(fd: int, prefix: str, wait: bool) -> bool:
    command = _OFD_WAIT if wait else _OFD_TRY
    if not BYTE_LOCKS or command is None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    request = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, _offset(prefix), 1, 0)
    try:
        fcntl.fcntl(fd, command, request)
    except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: someone holds it
        return False
    return True


@contextlib.contextmanager
def key_lock(prefix: str, wait: bool = True) -> Iterator[bool]:
    """Hold the download lock of the entry ``prefix`` (``<shard>/<key>``) for the block.

    Yields True once held; with ``wait=False`` yields False at once when someone else
    holds it. The lock file is opened without following a symbolic link.
    """
    fd = os.open(lock_path(prefix), os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
    try:
        yield _lock(fd, prefix, wait)
    finally:
        os.close(fd)  # releases the lock
