"""Where the bytes of a tar stream come from, for the reader of :mod:`.tar_format`.

:class:`Chunks` reads on in large chunks (a shard streamed front to back, every member's
data wanted); :class:`Seeking` reads the headers of a seekable file and seeks over the
data (the index of a tar container, which reads members later, by offset). A
gzip-compressed archive is read through the gzip codec of :mod:`pfio.compression`
(:func:`gunzipped`): :data:`DECODE_ERRORS` are what it raises on damage,
:func:`decode_error` says so naming the archive, and :func:`read_to_end` makes it check the
gzip trailer.
"""

from __future__ import annotations

import io
import logging
from typing import IO, Protocol

from ..compression import CODECS, DecodeError, decompressed
from ..errors import ArchiveError
from ..fs.file_types import read_into
from ..fs.skipping import skip

logger = logging.getLogger(__name__)

#: bytes :class:`Chunks` asks of the underlying file per read (large reads: few system
#: calls, and on S3 the body of one GET received straight into them)
CHUNK = 4 << 20
#: after the end-of-archive block, at most this much of the rest is read by :class:`Chunks`
#: (a tar is padded to a 10 KiB record; reading it makes the whole object's body be
#: consumed, not dropped)
TRAILER_LIMIT = 64 << 10

#: the first bytes of a gzip stream, and the names of gzip-compressed tar archives
GZIP_MAGIC = b"\x1f\x8b"
GZIP_SUFFIXES = (".tar.gz", ".tgz")
#: what decompressing a truncated or corrupt ``.tar.gz`` raises
DECODE_ERRORS = (DecodeError,)


class Source(Protocol):
    """Bytes of a tar stream taken in order."""

    @property
    def offset(self) -> int:
        """The offset of the next byte in the tar stream."""
        ...

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes (fewer only at the end of the stream)."""
        ...

    def skip(self, n: int) -> bool:
        """Move ``n`` bytes on; False when the stream ends before that."""
        ...

    def finish(self) -> None:
        """Called once the end-of-archive block is read."""
        ...


class Chunks:
    """The bytes of ``f`` (its next byte at ``start`` of the tar stream), read in chunks
    of :data:`CHUNK` bytes; a large member is read whole, straight."""

    __slots__ = ("_f", "_buf", "_pos", "_base")

    def __init__(self, f: IO[bytes], start: int = 0) -> None:
        self._f = f
        self._buf = b""
        self._pos = 0
        self._base = start  # stream offset of _buf[0]

    @property
    def offset(self) -> int:
        return self._base + self._pos

    def take(self, n: int) -> bytes:
        pos, buf = self._pos, self._buf
        end = pos + n
        if end <= len(buf):
            self._pos = end
            return buf[pos:end]
        have = buf[pos:]
        self._base += len(buf)
        self._buf, self._pos = b"", 0
        if n - len(have) >= CHUNK:  # a large member: read it whole, straight
            rest = self._read_exactly(n - len(have))
            self._base += len(rest)
            return have + rest if have else rest
        parts = [have] if have else []
        need = n - len(have)
        while need > 0:
            chunk = self._f.read(CHUNK)
            if not chunk:
                break
            if len(chunk) >= need:
                parts.append(chunk[:need])
                self._buf, self._pos = chunk, need
                need = 0
            else:
                parts.append(chunk)
                self._base += len(chunk)
                need -= len(chunk)
        return b"".join(parts) if len(parts) != 1 else parts[0]

    def _read_exactly(self, n: int) -> bytes:
        out = bytearray(n)
        view = memoryview(out)
        got = 0
        while got < n:
            k = read_into(self._f, view[got:])
            if not k:
                break
            got += k
        del view
        if got < n:
            del out[got:]
        return bytes(out)

    def skip(self, n: int) -> bool:
        return not n or len(self.take(n)) == n

    def finish(self) -> None:
        """Read what follows the end block (the record's padding), up to a limit."""
        if len(self.take(TRAILER_LIMIT)) == TRAILER_LIMIT:
            logger.debug("more than %d bytes follow the end of a tar archive; not read",
                         TRAILER_LIMIT)


class Seeking:
    """The headers of the seekable file ``f`` (positioned at ``start``), read as asked; data
    is skipped by :func:`~pfio.fs.skipping.skip`: by seeking, reading the last byte skipped
    to check that it is there (so a read-ahead reader reads on, and a member cut short is
    found, as :mod:`tarfile` does)."""

    __slots__ = ("_f", "offset")

    def __init__(self, f: IO[bytes], start: int = 0) -> None:
        self._f = f
        self.offset = start

    def take(self, n: int) -> bytes:
        data = self._f.read(n)
        while 0 < len(data) < n:
            more = self._f.read(n - len(data))
            if not more:
                break
            data += more
        self.offset += len(data)
        return data

    def skip(self, n: int) -> bool:
        moved = skip(self._f, n)
        self.offset += moved
        return moved == n

    def finish(self) -> None:
        pass


def gunzipped(raw: IO[bytes], archive: str) -> io.BufferedReader:
    """The decompressed bytes of the gzip stream ``raw`` (``archive`` names it in errors):
    seekable, backward by rewinding ``raw``; closing it closes ``raw``."""
    return decompressed(raw, CODECS["gzip"], archive)


def decode_error(archive: str, exc: DecodeError) -> ArchiveError:
    """The :class:`ArchiveError` for the decompression error ``exc`` of ``archive``."""
    return ArchiveError(f"{archive}: {exc.reason} compressed archive ({exc.detail})")


def read_to_end(stream: IO[bytes], archive: str, chunk: int = 1 << 20) -> int:
    """Read the decompressing ``stream`` to its end, so that the trailer of every gzip
    member is checked (the CRC-32 and length of its data: without it a flipped byte in
    the compressed data reads as wrong data, silently); return the stream's position.

    Raises:
        ArchiveError: the data does not match its trailer, is cut short or corrupt.
    """
    try:
        while stream.read(chunk):
            pass
        return stream.tell()
    except DECODE_ERRORS as exc:
        raise decode_error(archive, exc) from exc
