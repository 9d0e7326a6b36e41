"""The files of an object cache entry: opening one pinned, its metadata, filling it, and
telling whether a whole copy written without ``fsync`` survived the machine's last stop.

An entry's metadata (what it was fetched from, its version, size and CRC-32) is a JSON
object in the entry file's extended attribute :data:`META_XATTR` where the directory's
filesystem keeps user attributes (set on the download before it is renamed into place, so
the bytes and their metadata are published at once, and no second file is made), else in a
``<key>.meta`` file next to it, replaced by rename (:func:`xattrs_work` tells which).

Whole copies are published by rename without being synced to disk (two ``fsync`` calls
per file would cost more than the rest of a cached read). A killed process loses nothing
it wrote; only a machine that stops (power cut, kernel crash) may leave a file that has its
size but not its bytes. So an entry records the boot it was written in
(:data:`BOOT_ID`) and the CRC-32 of its bytes: in the boot that wrote it, it is trusted as
it is; in a later boot its bytes are checked against the CRC once, and the entry is then
recorded as checked in this boot (:func:`intact`).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import threading
from collections.abc import Callable
from typing import IO, Any

from ..checksums import crc32
from .private_dir import NOFOLLOW

#: what changes when the machine starts again (Linux); None elsewhere, where whole copies
#: are synced to disk before they are published
BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"

#: the extended attribute that holds an entry's metadata (see the module documentation)
META_XATTR = "user.pfio.meta"

#: bytes copied at a time when an entry is filled or checked
CHUNK = 1 << 20

_buffers = threading.local()


def _read_boot_id() -> str | None:
    try:
        with open(BOOT_ID_FILE, encoding="ascii") as f:
            return f.read().strip() or None
    except OSError:
        return None


#: the identity of this boot of the machine (see the module documentation)
BOOT_ID = _read_boot_id()


def _buffer() -> memoryview:
    """This thread's copy buffer (made once: allocating a fresh MiB costs more than a small
    file's copy)."""
    view = getattr(_buffers, "view", None)
    if view is None:
        view = _buffers.view = memoryview(bytearray(CHUNK))
    return view


def copy_into(src: IO[bytes], fd: int) -> int:
    """Copy ``src`` from its position to its end into the descriptor ``fd``; return the
    CRC-32 of the bytes copied."""
    view = _buffer()
    readinto = getattr(src, "readinto", None)
    crc = 0
    while True:
        if readinto is not None:
            n = readinto(view)
            chunk = view[:n]
        else:
            chunk = memoryview(src.read(CHUNK))
            n = len(chunk)
        if not n:
            return crc
        crc = crc32(chunk, crc)
        while chunk:
            chunk = chunk[os.write(fd, chunk):]


def file_crc(fd: int) -> int:
    """The CRC-32 of the whole file open as ``fd`` (read with ``pread``)."""
    view = _buffer()
    crc, offset = 0, 0
    while True:
        n = os.preadv(fd, [view], offset)
        if not n:
            return crc
        crc = crc32(view[:n], crc)
        offset += n


def intact(fd: int, meta: dict[str, Any], save: Callable[[dict[str, Any]], None]) -> bool:
    """True when the whole copy open as ``fd`` can be served: it was synced to disk when
    published (no ``boot`` in ``meta``), or written in this boot, or its bytes match its
    CRC-32 (then ``save`` records ``meta`` as of this boot, so this is checked once per
    boot)."""
    boot = meta.get("boot")
    if boot is None or boot == BOOT_ID:
        return True
    if meta.get("crc32") is None or file_crc(fd) != meta["crc32"]:
        return False
    save({**meta, "boot": BOOT_ID})
    return True


def pin(path: str, flags: int = os.O_RDONLY) -> int | None:
    """Open ``path`` holding a shared ``flock`` (so eviction leaves it), or None when it
    does not exist. Retries when the file is replaced while being opened."""
    while True:
        try:
            fd = os.open(path, flags | NOFOLLOW)
        except FileNotFoundError:
            return None
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            os.close(fd)
            return None
        mine = os.fstat(fd)
        if (st.st_ino, st.st_dev) == (mine.st_ino, mine.st_dev):
            return fd
        os.close(fd)


def read_meta(path: str) -> dict[str, Any] | None:
    """The metadata of an entry, or None when missing or unreadable."""
    try:
        with open(path, "rb", opener=nofollow_opener) as f:
            meta: dict[str, Any] = json.loads(f.read())
            return meta
    except (FileNotFoundError, ValueError):
        return None


def write_meta(path: str, meta: dict[str, Any]) -> None:
    """Replace the metadata file ``path`` atomically."""
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = nofollow_opener(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.write(fd, json.dumps(meta).encode())  # (a few hundred bytes: one write)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def xattrs_work(directory: str) -> bool:
    """True when files in ``directory`` keep user extended attributes (probed once on a
    file of its own, removed at once)."""
    if not hasattr(os, "setxattr"):
        return False
    probe = os.path.join(directory, f".xattr-probe.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = nofollow_opener(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.setxattr(fd, META_XATTR, b"{}")
        return os.getxattr(fd, META_XATTR) == b"{}"
    except OSError:  # ENOTSUP, EPERM, or no extended attributes on this platform
        return False
    finally:
        os.close(fd)
        os.unlink(probe)


def read_meta_xattr(fd: int) -> dict[str, Any] | None:
    """The metadata kept on the entry file open as ``fd``, or None when it has none."""
    try:
        meta: dict[str, Any] = json.loads(os.getxattr(fd, META_XATTR))
        return meta
    except (OSError, ValueError):  # ENODATA: published without it, or a damaged value
        return None


def write_meta_xattr(fd: int, meta: dict[str, Any]) -> None:
    """Set the metadata of the entry file open as ``fd`` (one atomic system call)."""
    os.setxattr(fd, META_XATTR, json.dumps(meta).encode())


def nofollow_opener(path: str, flags: int) -> int:
    """The ``opener`` of files in a cache directory (symbolic links are not followed)."""
    return os.open(path, flags | NOFOLLOW, 0o600)
