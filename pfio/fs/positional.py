"""Reading at positions: seeking as every pfio reader does it (:func:`seek_position`,
:class:`SeekableReader`), and positional reads of an open file, the bytes at an offset
leaving its position alone (:class:`PositionalReader`, :class:`PositionalFile`)."""

from __future__ import annotations

import errno
import io
import os
import threading
from typing import IO, Any


class NegativeSeekError(OSError, ValueError):
    """A seek before the start of a file: an ``OSError`` (``EINVAL``) as for a real file, and
    a ``ValueError`` as for an in-memory one."""


def seek_position(offset: int, whence: int, current: int, size: int | None,
                  name: str | None = None) -> int:
    """The absolute position that ``seek(offset, whence)`` moves to from ``current`` in a
    file of ``size`` bytes (None: unknown).

    Raises:
        ValueError: ``whence`` is not 0, 1 or 2.
        io.UnsupportedOperation: seeking from the end of a file of unknown size.
        NegativeSeekError: the position would be negative.
    """
    if whence == io.SEEK_SET:
        position = offset
    elif whence == io.SEEK_CUR:
        position = current + offset
    elif whence == io.SEEK_END:
        if size is None:
            raise io.UnsupportedOperation("seek from the end of a file of unknown size")
        position = size + offset
    else:
        raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
    if position < 0:
        raise NegativeSeekError(errno.EINVAL, f"negative seek position {position}", name)
    return position


class SeekableReader(io.RawIOBase):
    """Base of pfio's seekable read-only raw files: ``readable``, ``seekable``, ``tell`` and
    ``seek`` over the position ``_pos`` in a file of ``_size`` bytes (None: unknown; a seek
    from the end then asks :meth:`_end`). Subclasses implement ``readinto``."""

    name: Any = ""
    _pos = 0
    _size: int | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if self.closed:
            raise ValueError("seek of closed file")
        size = self._end() if self._size is None and whence == io.SEEK_END else self._size
        self._pos = seek_position(offset, whence, self._pos, size, self.name)
        return self._pos

    def _end(self) -> int | None:
        """The size of the file, for a seek from its end while ``_size`` is unknown."""
        return None


class PositionalReader:
    """Reads at offsets of the binary file ``f``, from any thread, without a shared position.

    It uses ``f``'s own ``read_at`` and ``read_tail`` where it has them (pfio's S3 and HDFS
    readers: one request each), ``os.pread`` on a plain local file, and else a seek and a
    read under a lock. Closing ``f`` is its owner's business.
    """

    def __init__(self, f: IO[bytes]) -> None:
        self.file = f
        self._own_read_at = getattr(f, "read_at", None)
        self._own_read_tail = getattr(f, "read_tail", None)
        self._own_readinto_at = getattr(f, "readinto_at", None)
        self._fd = _plain_fd(f)
        self._lock = threading.Lock()

    def read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer at the end of the file)."""
        if self._own_read_at is not None:
            return bytes(self._own_read_at(offset, size))
        if self._fd is not None:
            return os.pread(self._fd, size, offset)
        with self._lock:
            self.file.seek(offset)
            return self.file.read(size)

    def readinto_at(self, offset: int, buffer: memoryview) -> int:
        """The bytes at ``offset`` into ``buffer`` (a writable byte view; as many as it
        holds, fewer at the end of the file): straight into it where ``f`` has
        ``readinto_at`` (pfio's S3 reader) or is a plain local file. Returns their count."""
        if self._own_readinto_at is not None:
            return int(self._own_readinto_at(offset, buffer))
        if self._fd is not None:
            return _preadinto(self._fd, buffer, offset)
        data = self.read_at(offset, len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def read_tail(self, size: int) -> tuple[int, bytes]:
        """The last ``size`` bytes of the file (all of it when it is shorter), and the
        offset they start at."""
        if self._own_read_tail is not None:
            tail: tuple[int, bytes] = self._own_read_tail(size)
            return tail
        end = self.size()
        start = max(0, end - size)
        return start, self.read_at(start, end - start)

    def size(self) -> int:
        """The size of the file in bytes."""
        known = getattr(self.file, "size", None)
        if isinstance(known, int):
            return known
        if self._fd is not None:
            return os.fstat(self._fd).st_size
        with self._lock:
            return self.file.seek(0, io.SEEK_END)


class PositionalFile(SeekableReader):
    """A read-only file object with a position of its own over a :class:`PositionalReader`,
    for libraries that want a file (pyarrow, ...): several of them may share one reader, and
    so one open file, from several threads. Every ``read`` is one positional read."""

    def __init__(self, reader: PositionalReader, name: str = "") -> None:
        super().__init__()
        self._reader = reader
        self.name = name

    def _end(self) -> int:
        self._size = self._reader.size()
        return self._size

    def read(self, size: int | None = -1) -> bytes:
        if self.closed:
            raise ValueError("read of closed file")
        if size is None or size < 0:
            end = self._size if self._size is not None else self._end()
            size = max(0, end - self._pos)
        data = self._reader.read_at(self._pos, size) if size else b""
        self._pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(memoryview(buffer)))
        memoryview(buffer).cast("B")[:len(data)] = data
        return len(data)


def _preadinto(fd: int, buffer: memoryview, offset: int) -> int:
    """``os.preadv`` into ``buffer`` until it is full or the file ends; the bytes read."""
    done = 0
    while done < len(buffer):
        got = os.preadv(fd, [buffer[done:]], offset + done)
        if got == 0:
            break
        done += got
    return done


def _plain_fd(f: Any) -> int | None:
    """The OS file descriptor of a plain local file, else None."""
    if not isinstance(f, (io.BufferedReader, io.FileIO)):
        return None
    try:
        return f.fileno()
    except (OSError, ValueError):
        return None
