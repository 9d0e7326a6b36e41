"""Seeking, as every pfio reader does it."""

from __future__ import annotations

import errno
import io


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
