"""Sequential reading of a byte range through a ``read_at(offset, size)`` function.

:class:`RangeReader` serves both the scan of tar headers at open and the streaming of large
members. It reads ahead adaptively: after a jump it fetches a small chunk (a tar header and
a little more); while reads continue where the last chunk ended (or skip less than a chunk
beyond it), the chunk doubles up to a limit. So an archive of many small members is scanned
with a few large reads, and one of large members with one small read per header, never
reading the members' data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ArchiveError
from ..fs.positional import SeekableReader

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
        self._min_chunk = min_chunk
        self._max_chunk = max(min_chunk, max_chunk)
        self._chunk = min_chunk
        self._on_close = on_close
        self._pos = 0
        self._buf = b""
        self._buf_pos = 0
        self._fetched_to: int | None = None  # where the last read of ``read_at`` ended

    def readinto(self, buffer: Any) -> int:
        if self.closed:
            raise ValueError("read of closed file")
        view = memoryview(buffer).cast("B")
        want = len(view)
        if self._size is not None:
            want = max(0, min(want, self._size - self._pos))
        filled = 0
        while filled < want:
            offset = self._pos - self._buf_pos
            if 0 <= offset < len(self._buf):
                n = min(want - filled, len(self._buf) - offset)
                view[filled:filled + n] = self._buf[offset:offset + n]
            else:
                n = self._fetch(view[filled:want])
                if n == 0:
                    break
            filled += n
            self._pos += n
        return filled

    def _fetch(self, view: memoryview) -> int:
        """Read at the current position into ``view`` (directly when it is at least a chunk)
        or into the read-ahead buffer; return the bytes given to ``view``."""
        # reading on: the miss is where the last read ended, or a little (one chunk) further
        reading_on = (self._fetched_to is not None
                      and 0 <= self._pos - self._fetched_to < self._chunk)
        self._chunk = min(self._chunk * 2, self._max_chunk) if reading_on else self._min_chunk
        n = max(len(view), self._chunk)
        if self._size is not None:
            n = min(n, self._size - self._pos)
        data = self._read_at(self._start + self._pos, n)
        if len(data) < n and self._size is not None:
            raise ArchiveError(f"{self._archive}: member {self.name!r} is cut short at byte "
                               f"{self._pos + len(data)} of {self._size}: truncated archive")
        self._fetched_to = self._pos + len(data)
        if len(data) > len(view):
            self._buf, self._buf_pos = data, self._pos
        given = min(len(view), len(data))
        view[:given] = memoryview(data)[:given]
        return given

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
            self._buf = b""
            if self._on_close is not None:
                self._on_close()
