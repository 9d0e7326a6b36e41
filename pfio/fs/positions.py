"""Seeking, as every pfio reader does it."""

from __future__ import annotations

import errno
import io
from typing import Any


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
