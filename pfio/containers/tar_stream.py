"""Writing a tar stream: the one tar writer of pfio, under the tar container's writer
(:mod:`pfio.containers.tar_writer`) and the shard writer
(:mod:`pfio.integrations.shards.writer`).

Headers are :mod:`tarfile`'s pax format (POSIX.1-2001), encoded as :mod:`tarfile` encodes
them: a member whose name is longer than 100 bytes or not ASCII, or whose size is 8 GiB or
more, gets a pax extended header (GNU tar, bsdtar and :mod:`tarfile` read it), any other a
plain ustar header. uid and gid are 0, user and group names empty. Each member's data is
padded to a 512-byte block; :meth:`TarStream.finish` ends the archive with two zero blocks
and pads it to a 10 KiB record, as :mod:`tarfile` and GNU tar do, so the bytes are those
``tarfile.open(mode="w", format=tarfile.PAX_FORMAT)`` writes for the same members. A
gzip-compressed stream goes through the gzip codec of :mod:`pfio.compression` (no file name
and no timestamp in its header: the same members give the same bytes).
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from typing import IO, Any

from ..compression.codecs import CODECS, Compressing
from ..fs.file_types import as_binary_io

BLOCK = tarfile.BLOCKSIZE
RECORD = tarfile.RECORDSIZE
#: the largest piece of a member's data read from its source at a time
COPY_CHUNK = 1 << 20


def header(name: str, size: int, mode: int, mtime: int,
           kind: bytes = tarfile.REGTYPE) -> bytes:
    """The header blocks of a member (a pax extended header first where it needs one); a
    directory's name gets its trailing ``/``."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.mode = mode
    info.mtime = mtime
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")


def padding(size: int) -> bytes:
    """The zero bytes that fill the last block of ``size`` bytes of data."""
    return bytes(-size % BLOCK)


def member_blocks(name: str, data: bytes, mode: int, mtime: int) -> list[bytes]:
    """The blocks of a regular member holding ``data``: header, data, padding."""
    blocks = [header(name, len(data), mode, mtime), data]
    pad = padding(len(data))
    if pad:
        blocks.append(pad)
    return blocks


def end_blocks(size: int) -> bytes:
    """The end of an archive of ``size`` bytes so far: two zero blocks, then zeros to the
    end of its record."""
    end = 2 * BLOCK
    return bytes(end + -(size + end) % RECORD)


class TarStream:
    """Members written one after another onto ``out`` (a binary writer, left open).

    Args:
        out: where the archive goes.
        compresslevel: None writes a plain tar; a level writes it gzip-compressed.

    ``size`` is the number of tar bytes written so far (before compression). After
    :meth:`abandon` writes go nowhere.
    """

    def __init__(self, out: IO[bytes], compresslevel: int | None = None) -> None:
        self._gate = _Gate(out)
        self._compressor: Compressing | None = None
        if compresslevel is not None:
            self._compressor = CODECS["gzip"].writer(as_binary_io(self._gate), compresslevel)
        self._out: Compressing | _Gate = self._compressor or self._gate
        self.size = 0

    def write_blocks(self, blocks: Iterable[bytes]) -> int:
        """Append ``blocks`` (made by :func:`member_blocks`, :func:`header`...); return
        the bytes they took."""
        size = 0
        for block in blocks:
            if block:
                self._out.write(block)
                size += len(block)
        self.size += size
        return size

    def add(self, name: str, size: int, data: IO[bytes] | None, mode: int, mtime: int,
            kind: bytes = tarfile.REGTYPE) -> None:
        """Append a member: its header, then ``size`` bytes read from ``data`` (positioned
        at their start; None for a member without data, such as a directory).

        Raises:
            ValueError: ``data`` ends before ``size`` bytes, or is None with a ``size``.
        """
        if size and data is None:
            raise ValueError(f"member {name!r}: {size} bytes announced without data")
        self.write_blocks([header(name, size, mode, mtime, kind)])
        left = size
        while data is not None and left:
            chunk = data.read(min(left, COPY_CHUNK))
            if not chunk:
                raise ValueError(f"member {name!r}: its data ends after {size - left} of "
                                 f"{size} bytes")
            self.write_blocks([chunk])
            left -= len(chunk)
        self.write_blocks([padding(size)])

    def finish(self) -> int:
        """End the archive (and the gzip stream); return its size in tar bytes."""
        self.write_blocks([end_blocks(self.size)])
        if self._compressor is not None:
            self._compressor.close()
        return self.size

    def abandon(self) -> None:
        """Write nothing more to ``out``; release the compressor."""
        self._gate.stream = None
        if self._compressor is not None:
            self._compressor.close()  # into nothing


class _Gate(io.RawIOBase):
    """``stream`` as the compressor writes to it; once ``stream`` is None (the archive was
    abandoned) writes go nowhere."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__()
        self.stream: IO[bytes] | None = stream

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.stream is None:
            return memoryview(data).nbytes
        return self.stream.write(data)
