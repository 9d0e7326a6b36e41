"""Moving forward over a binary stream: by seeking where the stream can, by reading and
dropping what it gives where it cannot (a network body, a decompressor).

The one forward skip of pfio: the codecs use it to seek forward in decompressed data, the
tar reader to pass over members' data, the shard and TFRecord readers to resume inside a
file.
"""

from __future__ import annotations

import io
from typing import IO, cast

#: the largest piece read (and dropped) at a time
SKIP_CHUNK = 1 << 20


def skip(f: IO[bytes], count: int) -> int:
    """Move ``f`` ``count`` bytes forward from where it stands; return how many bytes it
    moved: fewer than ``count`` only when ``f`` ends first.

    A seekable ``f`` seeks, and reads the last byte skipped to see that it is there (a
    decompressing reader decompresses up to it, a reader of a remote file starts fetching
    there; only when it is missing is the size asked, with a seek to the end, or what is
    left read when the stream cannot tell); another is read and dropped,
    :data:`SKIP_CHUNK` bytes at a time.

    Raises:
        ValueError: a negative ``count``.
    """
    if count < 0:
        raise ValueError(f"cannot skip a negative number of bytes ({count})")
    if not count:
        return 0
    if not f.seekable():
        return drop(f, count)
    here = f.tell()
    f.seek(here + count - 1)
    if f.read(1):
        return count
    try:
        end = f.seek(0, io.SEEK_END)
    except (OSError, ValueError):  # a size it cannot tell: count what is left by reading
        f.seek(here)
        return drop(f, count)
    return f.seek(max(here, end)) - here


def drop(f: IO[bytes] | io.RawIOBase, count: int | None = None) -> int:
    """Read ``count`` bytes of ``f`` (all to its end when None) and drop them; return how
    many were read: fewer than ``count`` only when ``f`` ends first. Memory stays at one
    chunk of :data:`SKIP_CHUNK` bytes at most, whatever ``count``."""
    size = SKIP_CHUNK if count is None else min(max(count, 1), SKIP_CHUNK)
    scratch = memoryview(bytearray(size))
    # every binary file of io and pfio has readinto; typing.IO declares none
    readinto = cast(io.RawIOBase, f).readinto
    moved = 0
    while count is None or moved < count:
        piece = scratch if count is None else scratch[:min(count - moved, size)]
        got = readinto(piece)
        if not got:
            break
        moved += got
    return moved
