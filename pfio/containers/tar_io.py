"""Sequential reading of a byte range through a ``read_at(offset, size)`` function.

:class:`RangeReader` serves both the scan of tar headers at open and the streaming of large
members. Its read-ahead is the ``sequential`` strategy of :mod:`pfio.fs.readahead`: after a
jump it fetches a small chunk (a tar header and a little more); while reads continue where
the last chunk ended (or skip less than a chunk beyond it), the chunk doubles up to a limit,
and a read larger than the chunk is one fetch. So an archive of many small members is
scanned with a few large reads, and one of large members with one small read per header,
never reading the members' data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ArchiveError
from ..fs.positional import SeekableReader
from ..fs.readahead import Sequential

ReadAt = Callable[[int, int], bytes]


class RangeReader(SeekableReader):
    """The bytes ``[start, start + size)`` of ``read_at`` as a seekable raw file.

    Args:
        read_at: returns up to ``size`` bytes at ``offset`` (fewer only at the end of data).
        start: where the range starts.
        size: its length; ``None`` reads up to the end of the data.
        archive, name: for error messages.
        min_chunk, max_chunk: read-ahead after a jump, and its limit while reading on.
        on_close: called once when the reader is closed.

    Raises (on reads):
        ArchiveError: a range of known size ends early (a truncated archive).
    """

    def __init__(self, read_at: ReadAt, start: int = 0, size: int | None = None, *,
                 archive: str = "", name: str = "", min_chunk: int = 16 << 10,
                 max_chunk: int = 4 << 20, on_close: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.name = name or archive
        self._archive = archive
        self._read_at = read_at
        self._start = start
        self._size = size
        self._max_chunk = max(min_chunk, max_chunk)
        self._on_close = on_close
        self._pos = 0
        self._ahead = Sequential(self._fetch, size, first=min_chunk, limit=max_chunk,
                                 slack=True, whole_reads=True, name=self.name)

    def readinto(self, buffer: Any) -> int:
        if self.closed:
            raise ValueError("read of closed file")
        with memoryview(buffer) as view, view.cast("B") as target:
            n = self._ahead.readinto(self._pos, target)
        self._pos += n
        return n

    def _fetch(self, start: int, stop: int) -> bytes:
        """The bytes ``[start, stop)`` of the range (capped at its end)."""
        if self._size is not None:
            stop = min(stop, self._size)
        data = self._read_at(self._start + start, stop - start)
        if len(data) < stop - start and self._size is not None:
            raise ArchiveError(f"{self._archive}: member {self.name!r} is cut short at byte "
                               f"{start + len(data)} of {self._size}: truncated archive")
        return data

    def readall(self) -> bytes:
        """The rest of the range, read in chunks of at most ``max_chunk`` bytes."""
        parts: list[bytes] = []
        while True:
            left = self._max_chunk if self._size is None else self._size - self._pos
            part = self.read(min(left, self._max_chunk))
            if not part:
                return b"".join(parts)
            parts.append(part)

    def close(self) -> None:
        if self.closed:
            return
        try:
            super().close()
        finally:
            self._ahead.close()
            if self._on_close is not None:
                self._on_close()
