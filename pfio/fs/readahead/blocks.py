"""The ``blocks`` strategy of the read-ahead policy (see :mod:`pfio.fs.readahead`)."""

from __future__ import annotations

import threading
from typing import Protocol

from .policy import Fetch, ReadAhead


class BlockStore(Protocol):
    """Where :class:`Blocks` keeps the blocks it fetched."""

    def present(self, first: int, count: int) -> bytes:
        """One byte per block ``first`` .. ``first + count - 1``: nonzero when it is kept."""

    def put(self, block: int, data: memoryview) -> None:
        """Keep ``data``: whole blocks from ``block`` on (the last may end the file)."""

    def get(self, offset: int, size: int) -> bytes:
        """The kept bytes ``[offset, offset + size)``."""


class Blocks(ReadAhead):
    """The ``blocks`` strategy: a read is rounded out to whole blocks of ``block_size``,
    each run of blocks the store does not keep is one fetch (in this thread, under a lock:
    two threads missing one block fetch it once), and the read is served by the store."""

    strategy = "blocks"

    def __init__(self, fetch: Fetch, size: int, *, store: BlockStore, block_size: int,
                 name: str = "") -> None:
        super().__init__(fetch, size, name=name)
        self.block_size = block_size
        self._store = store
        self._lock = threading.Lock()

    def missing(self, offset: int, size: int) -> bool:
        """Whether the store lacks a block of ``[offset, offset + size)``."""
        first, last = self._blocks(offset, size)
        return b"\x00" in self._store.present(first, last - first + 1)

    def read(self, pos: int, size: int) -> bytes:
        size = self._left(pos, size)
        if size <= 0:
            return b""
        first, last = self._blocks(pos, size)
        present = self._store.present(first, last - first + 1)
        if b"\x00" in present:
            with self._lock:  # (another thread may have fetched them meanwhile)
                self._fetch_missing(first, self._store.present(first, len(present)))
        return self._store.get(pos, size)

    def readinto(self, pos: int, target: memoryview) -> int:
        data = self.read(pos, len(target))
        target[:len(data)] = data
        return len(data)

    def _blocks(self, offset: int, size: int) -> tuple[int, int]:
        return offset // self.block_size, (offset + size - 1) // self.block_size

    def _fetch_missing(self, first: int, present: bytes) -> None:
        index = 0
        while index < len(present):
            if present[index]:
                index += 1
                continue
            run = index
            while index < len(present) and not present[index]:
                index += 1
            start = (first + run) * self.block_size
            data = self._fetch_new(start, self._stop((first + index) * self.block_size))
            self._store.put(first + run, memoryview(data))
