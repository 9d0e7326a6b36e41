"""Block files: a large remote file cached in fixed-size blocks in one sparse local file.

Layout of a ``<key>.blk`` file::

    0      header: magic ``PFIOBLK1``, block size (uint64), file size (uint64)
    4096   one byte per block: 1 once the block is present
    D      the blocks, block ``i`` at ``D + i * block_size`` (D: the next multiple of 4096)

The file is created sparse with the source's full size, so a block not read yet takes no
disk space. A block is written, and synced to disk, before its presence byte, so readers in
any process (and after a power cut) take a set byte as a promise that the block is complete.
Two processes missing the same block at the same moment may both fetch it (they write the
same bytes). Which bytes a read fetches is the ``blocks`` strategy of
:mod:`pfio.fs.readahead`: the read rounded out to whole blocks, each run of missing blocks
one read of the source; the block file is its store.
"""

from __future__ import annotations

import io
import mmap
import os
import struct
import time
from typing import IO, Any

from ..fs.positional import seek_position
from ..fs.readahead import Blocks
from ..trace import hook
from .object_cache import Fill, ObjectCache, Source

HEADER = struct.Struct("<8sQQ")
MAGIC = b"PFIOBLK1"
_BITMAP_AT = 4096
_PAGE = 4096


def _data_start(nblocks: int) -> int:
    return -(-(_BITMAP_AT + nblocks) // _PAGE) * _PAGE


def block_file_filler(block_size: int) -> Fill:
    """The ``fill`` function of :meth:`ObjectCache.acquire` that makes an empty block file
    for the source's size (as the opened source tells it, else as a stat says)."""

    def fill(source: Source, fd: int) -> dict[str, Any]:
        size = source.size()
        nblocks = -(-size // block_size)
        os.pwrite(fd, HEADER.pack(MAGIC, block_size, size), 0)
        os.ftruncate(fd, _data_start(nblocks) + size)
        return {"block_size": block_size}

    return fill


class BlockFile(io.RawIOBase):
    """A read-only file whose bytes come from a block file, fetching missing blocks from
    the source. It has ``read_at(offset, size)``, ``read_tail(size)`` and ``size``, which
    archives use to read members without moving a shared position.

    Args:
        cache: the object cache holding the block file.
        source: the file to read; a file it has opened already (:meth:`Source.open`) is
            the one missing blocks are read from.
        block_size: the block size of a new block file (an existing one keeps its own).
        acquired: the block file's descriptor and whether it was cached, when
            :meth:`ObjectCache.acquire_first` gave them already.
    """

    def __init__(self, cache: ObjectCache, source: Source, block_size: int,
                 acquired: tuple[int, bool] | None = None) -> None:
        super().__init__()
        self._cache = cache
        self._source = source
        if acquired is None:
            acquired = cache.acquire(source, ".blk", block_file_filler(block_size), os.O_RDWR)
        fd, self.was_cached = acquired
        self._fd = fd
        try:
            magic, self.block_size, self.size = HEADER.unpack(os.pread(fd, HEADER.size, 0))
            if magic != MAGIC:
                raise ValueError(f"not a block file: {source.identity}")
            nblocks = -(-self.size // self.block_size)
            self._data_at = _data_start(nblocks)
            self._map = mmap.mmap(fd, self._data_at, mmap.MAP_SHARED, mmap.PROT_READ)
        except BaseException:
            os.close(fd)
            source.close()
            super().close()
            raise
        self.name = source.identity
        self._pos = 0
        self._remote: IO[bytes] | None = None
        store = _Store(fd, self._map, self._data_at, self.block_size, cache)
        self._blocks = Blocks(self._read_source, self.size, store=store,
                              block_size=self.block_size, name=self.name)

    # -- positional reads ----------------------------------------------------------------

    def read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer at the end of the file)."""
        if self.closed:
            raise ValueError("I/O operation on a closed file")
        if min(self.size, offset + size) <= offset:
            return b""
        if not hook.ENABLED:
            return self._blocks.read(offset, size)
        start = time.perf_counter()
        hit = not self._blocks.missing(offset, min(size, self.size - offset))
        data = self._blocks.read(offset, size)
        hook.record_cache("block", hit, len(data), time.perf_counter() - start,
                          self._source.identity)
        return data

    def read_tail(self, size: int) -> tuple[int, bytes]:
        """The last ``size`` bytes and the offset they start at."""
        start = max(0, self.size - size)
        return start, self.read_at(start, self.size - start)

    def _read_source(self, start: int, stop: int) -> bytes:
        """Bytes ``[start, stop)`` of the source (the policy checks their count; it calls
        this under its lock, one fetch at a time)."""
        if self._remote is None:
            self._remote = self._source.take()
        read_at = getattr(self._remote, "read_at", None)
        if read_at is not None:
            data: bytes = read_at(start, stop - start)
            return data
        self._remote.seek(start)
        return self._remote.read(stop - start)

    # -- file object ---------------------------------------------------------------------

    def readable(self) -> bool:
        """True."""
        return True

    def seekable(self) -> bool:
        """True."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Read into ``buffer`` from the current position; return the bytes read."""
        view = memoryview(buffer).cast("B")
        data = self.read_at(self._pos, len(view))
        view[:len(data)] = data
        self._pos += len(data)
        return len(data)

    def readall(self) -> bytes:
        """The rest of the file."""
        data = self.read_at(self._pos, self.size - self._pos)
        self._pos += len(data)
        return data

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move the position (as ``io.IOBase.seek``); return it."""
        self._pos = seek_position(offset, whence, self._pos, self.size, self.name)
        return self._pos

    def tell(self) -> int:
        """The current position."""
        return self._pos

    def close(self) -> None:
        """Release the block file (to eviction) and the source file."""
        if not self.closed:
            self._map.close()
            os.close(self._fd)
            if self._remote is not None:
                self._remote.close()
            self._source.close()  # an opening no block was read from
        super().close()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError(f"cannot pickle an open file: {self.name}")


class _Store:
    """The blocks of a block file on disk: what its read-ahead policy keeps."""

    def __init__(self, fd: int, bitmap: mmap.mmap, data_at: int, block_size: int,
                 cache: ObjectCache) -> None:
        self._fd = fd
        self._map = bitmap
        self._data_at = data_at
        self._block_size = block_size
        self._cache = cache

    def present(self, first: int, count: int) -> bytes:
        """The presence bytes of blocks ``first`` .. ``first + count - 1``."""
        return self._map[_BITMAP_AT + first:_BITMAP_AT + first + count]

    def put(self, block: int, data: memoryview) -> None:
        """Write ``data`` (whole blocks from ``block`` on), synced to disk before the
        presence bytes that promise it."""
        view, position = data, self._data_at + block * self._block_size
        while view:
            written = os.pwrite(self._fd, view, position)
            view, position = view[written:], position + written
        os.fdatasync(self._fd)
        count = -(-len(data) // self._block_size)
        os.pwrite(self._fd, b"\x01" * count, _BITMAP_AT + block)
        self._cache.note_added(len(data))

    def get(self, offset: int, size: int) -> bytes:
        """The kept bytes ``[offset, offset + size)``."""
        return os.pread(self._fd, size, self._data_at + offset)
