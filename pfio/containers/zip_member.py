"""Reading zip members: whole (one read of the backing file) or streamed in chunks.

A member up to the size threshold is read with ONE ``read_at`` covering its local header and
its data (the central directory's extra-field length is the guess for the local one, plus
:data:`SLACK` bytes; a longer local extra field costs one more read). Larger members are
streamed by :class:`MemberStream`, whose reads of the backing file are the ``sequential``
read-ahead of :mod:`pfio.fs.readahead` (as tar members'): one read of ``chunk_size`` bytes
at a time, and a seek back into the last one reads nothing again. The CRC-32 is checked in
both cases (for a streamed member, when it was read from its start to its end).
"""

from __future__ import annotations

import bz2
import io
import lzma
import struct
import zlib
from collections.abc import Callable
from typing import Any

from ..checksums import crc32
from ..errors import ArchiveError
from ..fs.positional import SeekableReader
from ..fs.readahead import Sequential
from .zip_format import FLAG_ENCRYPTED, LOCAL, MemberInfo, local_data_offset

#: bytes read beyond the guessed end of a member (absorbs a local extra field longer than the
#: central one, e.g. the zip64 field of members written with unknown sizes)
SLACK = 256

STORED, DEFLATED, BZIP2, LZMA = 0, 8, 12, 14
_METHOD_NAMES = {
    1: "shrink", 2: "reduce", 3: "reduce", 4: "reduce", 5: "reduce", 6: "implode",
    9: "deflate64", 10: "PKWARE imploding", 18: "IBM TERSE", 19: "IBM LZ77", 93: "zstandard",
    94: "MP3", 95: "xz", 96: "JPEG", 97: "WavPack", 98: "PPMd", 99: "AES encryption",
}


def check_readable(info: MemberInfo, archive: str, name: str) -> None:
    """Raise when pfio cannot decode the member.

    Raises:
        io.UnsupportedOperation: an encrypted member or an unsupported compression method.
    """
    if info.flags & FLAG_ENCRYPTED or info.method == 99:
        raise io.UnsupportedOperation(f"{archive}: member {name!r} is encrypted; pfio cannot "
                                      "read encrypted zip members")
    if info.method not in (STORED, DEFLATED, BZIP2, LZMA):
        what = _METHOD_NAMES.get(info.method, "unknown")
        raise io.UnsupportedOperation(
            f"{archive}: member {name!r} uses compression method {info.method} ({what}); "
            "pfio reads stored, deflated, bzip2 and lzma members")


def read_member(read_at: Callable[[int, int], bytes], info: MemberInfo, size: int,
                archive: str, name: str) -> bytes:
    """The decoded bytes of a member, CRC checked.

    Raises:
        ArchiveError: a bad local header, truncated data, corrupt compressed data, a size or
            CRC-32 mismatch.
    """
    offset, csize, method, crc, _, guess, _ = info
    want = LOCAL.size + guess + csize + SLACK
    buf = read_at(offset, want)
    start, _ = local_data_offset(buf, 0, archive, name)
    end = start + csize
    if end > len(buf):
        buf += read_at(offset + len(buf), end - len(buf))
        if end > len(buf):
            raise ArchiveError(f"{archive}: member {name!r} is cut short: truncated archive")
    data = buf[start:end]
    if method != STORED:
        try:
            data = _decompress(method, data, size)
        except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
            raise ArchiveError(f"{archive}: member {name!r}: corrupt compressed data "
                               f"({exc})") from exc
    if len(data) != size:
        raise ArchiveError(f"{archive}: member {name!r} decodes to {len(data)} bytes, the "
                           f"directory says {size}: corrupt archive")
    if crc32(data) != crc:
        raise ArchiveError(f"{archive}: CRC-32 mismatch in member {name!r}: corrupt archive")
    return data


def _decompress(method: int, data: bytes, size: int) -> bytes:
    # at most one byte more than the directory says (a lying size cannot make memory
    # explode); the size and CRC checks catch a stream that ends early (LZMA may have no
    # end marker) or goes on
    return _Decoder(method).decompress(data, size + 1)


def _lzma_decompressor(header: bytes) -> lzma.LZMADecompressor:
    """The decompressor of a zip LZMA stream whose 4-byte header and properties lead it."""
    _, props_len = struct.unpack_from("<2H", header)
    props = header[4:4 + props_len]
    if props_len != 5 or len(props) != 5:
        raise lzma.LZMAError("bad LZMA properties header")
    lclppb = props[0]
    pb, rest = divmod(lclppb, 45)
    lp, lc = divmod(rest, 9)
    dict_size = struct.unpack_from("<L", props, 1)[0]
    filters = [{"id": lzma.FILTER_LZMA1, "dict_size": dict_size, "lc": lc, "lp": lp, "pb": pb}]
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)


class _Decoder:
    """One decompression API over zlib (raw deflate), bz2 and zip's LZMA."""

    def __init__(self, method: int) -> None:
        self._method = method
        self._lzma_header = b""
        self._d: Any = None
        if method == DEFLATED:
            self._d = zlib.decompressobj(-15)
        elif method == BZIP2:
            self._d = bz2.BZ2Decompressor()

    @property
    def eof(self) -> bool:
        return self._d is not None and self._d.eof

    @property
    def needs_input(self) -> bool:
        if self._d is None:
            return True
        if self._method == DEFLATED:
            return not self._d.unconsumed_tail
        needs: bool = self._d.needs_input
        return needs

    def decompress(self, data: bytes, max_length: int) -> bytes:
        """Up to ``max_length`` decoded bytes from ``data`` and what earlier calls left
        over."""
        if self._d is None:  # LZMA: the properties header comes first
            self._lzma_header += data
            if len(self._lzma_header) < 9:
                return b""
            self._d = _lzma_decompressor(self._lzma_header)
            data = self._lzma_header[9:]
        if self._method == DEFLATED:
            data = data or self._d.unconsumed_tail
        decoded: bytes = self._d.decompress(data, max_length)
        return decoded


class MemberStream(SeekableReader):
    """A large member read in chunks of the backing file, decoded incrementally.

    Seeking forward decodes and skips; seeking backwards in a compressed member starts
    decoding again from its start (a stored member seeks directly). The CRC-32 is checked at
    the end when the member was read from its start. Wrap it in ``io.BufferedReader``.
    """

    _size: int  # always known

    def __init__(self, read_at: Callable[[int, int], bytes], data_start: int,
                 info: MemberInfo, size: int, archive: str, name: str, chunk_size: int,
                 on_close: Callable[[], None]) -> None:
        super().__init__()
        self.name = name
        self._archive = archive
        self._read_at = read_at
        self._start = data_start
        self._info = info
        self._size = size
        self._chunk = chunk_size
        self._on_close = on_close
        self._pos = 0
        self._ahead = Sequential(self._fetch, info.compressed_size, first=chunk_size,
                                 limit=chunk_size, whole_reads=True, name=name)
        self._restart(0)

    def _restart(self, position: int) -> None:
        """Decode again from ``position`` (0 for compressed members)."""
        stored = self._info.method == STORED
        self._decoder = None if stored else _Decoder(self._info.method)
        self._cpos = position
        self._decoded = position
        self._pending = memoryview(b"")
        self._crc = 0
        self._crc_valid = position == 0

    def readinto(self, buffer: Any) -> int:
        if self.closed:
            raise ValueError("read of closed file")
        self._move_to_target()
        if not self._pending:
            self._pending = memoryview(self._produce())
            if not self._pending:
                return 0
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        self._decoded += n
        self._pos = self._decoded
        return n

    def _move_to_target(self) -> None:
        target = self._pos
        if target == self._decoded:
            return
        if self._decoded < target <= self._decoded + len(self._pending):
            self._pending = self._pending[target - self._decoded:]
            self._decoded = target
            return
        if self._decoder is None:  # stored: jump
            self._restart(min(target, self._size))
            self._decoded = target
            return
        if target < self._decoded:
            self._restart(0)
        while self._decoded < target:
            if not self._pending:
                self._pending = memoryview(self._produce())
                if not self._pending:
                    return
            step = min(target - self._decoded, len(self._pending))
            self._pending = self._pending[step:]
            self._decoded += step

    def _produce(self) -> bytes:
        """The next decoded piece, b"" at the end of the member (where the CRC is checked)."""
        decoder = self._decoder
        if decoder is None:
            data = self._next_chunk()
        else:
            data = b""
            while not data and not decoder.eof:
                chunk = self._next_chunk() if decoder.needs_input else b""
                try:
                    data = decoder.decompress(chunk, self._chunk)
                except (zlib.error, OSError, EOFError, lzma.LZMAError) as exc:
                    raise ArchiveError(f"{self._archive}: member {self.name!r}: corrupt "
                                       f"compressed data ({exc})") from exc
                if not data and not chunk:
                    break  # the size and CRC checks tell a stream that ended early
        if data:
            if self._crc_valid:
                self._crc = crc32(data, self._crc)
            return data
        self._check_end()
        return b""

    def _next_chunk(self) -> bytes:
        n = min(self._chunk, self._info.compressed_size - self._cpos)
        if n <= 0:
            return b""
        data = self._ahead.read(self._cpos, n)
        self._cpos += n
        return data

    def _fetch(self, start: int, stop: int) -> bytes:
        """Bytes ``[start, stop)`` of the member's stored data."""
        stop = min(stop, self._info.compressed_size)
        data = self._read_at(self._start + start, stop - start)
        if len(data) != stop - start:
            raise ArchiveError(f"{self._archive}: member {self.name!r} is cut short: truncated "
                               "archive")
        return data

    def _check_end(self) -> None:
        if not self._crc_valid:
            return
        self._crc_valid = False  # check once
        produced = self._decoded + len(self._pending)
        if produced != self._size:
            raise ArchiveError(f"{self._archive}: member {self.name!r} decodes to {produced} "
                               f"bytes, the directory says {self._size}: corrupt archive")
        if self._crc != self._info.crc:
            raise ArchiveError(f"{self._archive}: CRC-32 mismatch in member {self.name!r}: "
                               "corrupt archive")

    def close(self) -> None:
        if self.closed:
            return
        try:
            super().close()
        finally:
            self._pending = memoryview(b"")
            self._ahead.close()
            self._on_close()


def open_stream(read_at: Callable[[int, int], bytes], info: MemberInfo, size: int,
                archive: str, name: str, chunk_size: int,
                on_close: Callable[[], None]) -> MemberStream:
    """A :class:`MemberStream` of a member, after reading and checking its local header."""
    header = read_at(info.header_offset, LOCAL.size + info.local_guess + SLACK)
    start, _ = local_data_offset(header, 0, archive, name)
    return MemberStream(read_at, info.header_offset + start, info, size, archive, name,
                        chunk_size, on_close)
