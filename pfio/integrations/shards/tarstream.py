"""Tar members read front to back from a stream, with large reads and no seeking.

Common headers are decoded field by field, others by :meth:`tarfile.TarInfo.frombuf` (v7
headers, base-256 sizes, damage); pax extended headers (``x``, ``g``: ``path`` and ``size``)
and GNU long names (``L``) are applied to the member that follows. Only regular members are
yielded: directories, links, devices and fifos are skipped. Everything is checked: a header
that does not decode, a member cut short, or a stream that ends without the end-of-archive
block raises :class:`~pfio.errors.ArchiveError` naming the shard, so a damaged shard never
yields partial data silently.
"""

from __future__ import annotations

import logging
import tarfile
from collections.abc import Iterator
from typing import IO, NamedTuple

from ...errors import ArchiveError

logger = logging.getLogger(__name__)

BLOCK = tarfile.BLOCKSIZE
#: bytes asked of the underlying file per read (large reads: few system calls, and on S3
#: the body of one GET received straight into them)
CHUNK = 4 << 20
#: after the end-of-archive block, at most this much of the rest is read (a tar is padded to
#: a 10 KiB record; reading it makes the whole object's body be consumed, not dropped)
TRAILER_LIMIT = 64 << 10

_REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)
_PAX = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_ZERO_BLOCK = bytes(BLOCK)
_POSIX_MAGIC = b"ustar\0"
_MAGICS = (_POSIX_MAGIC, b"ustar ")  # POSIX ustar and GNU tar (``ustar  \0``)


class Member(NamedTuple):
    """A regular member: its name, its bytes, where its first header starts in the
    (uncompressed) tar stream (the place to start reading again from), and where its data
    and padding end (0 where unknown)."""

    name: str
    data: bytes
    position: int
    end: int = 0


class _Chunks:
    """Bytes of ``f`` taken in order, read in chunks of :data:`CHUNK` bytes."""

    __slots__ = ("_f", "_buf", "_pos", "_base")

    def __init__(self, f: IO[bytes], start: int) -> None:
        self._f = f
        self._buf = b""
        self._pos = 0
        self._base = start  # stream offset of _buf[0]

    @property
    def offset(self) -> int:
        return self._base + self._pos

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes (fewer only at the end of the stream)."""
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
            k = self._f.readinto(view[got:])  # type: ignore[attr-defined]
            if not k:
                break
            got += k
        del view
        if got < n:
            del out[got:]
        return bytes(out)

    def skip(self, n: int) -> int:
        """Skip ``n`` bytes; return how many there were."""
        return len(self.take(n)) if n else 0


def iter_tar(f: IO[bytes], url: str, start: int = 0,
             stop: int | None = None) -> Iterator[Member]:
    """The regular members of the tar stream ``f``, whose next byte is at offset ``start``
    of the tar stream (a header boundary), in archive order; with ``stop``, those before
    that offset (a header boundary where ``f`` may end: a span of the archive).

    Raises:
        ArchiveError: a corrupt header, a member cut short, a missing end-of-archive block
            (a truncated shard); the message names ``url`` and the offset.
    """
    chunks = _Chunks(f, start)
    pax: dict[str, str] = {}
    global_pax: dict[str, str] = {}
    long_name: str | None = None
    first_header: int | None = None
    while True:
        at = chunks.offset
        if stop is not None and at >= stop and not pax and long_name is None:
            return
        block = chunks.take(BLOCK)
        if len(block) < BLOCK:
            if not block and at == 0:
                raise ArchiveError(f"{url}: empty file, not a tar archive")
            what = "a header is cut short" if block else "no end-of-archive block"
            raise ArchiveError(f"{url}: truncated tar archive at offset {at} ({what})")
        if block == _ZERO_BLOCK:
            if pax or long_name is not None:
                raise ArchiveError(f"{url}: corrupt tar archive: an extended header at "
                                   f"offset {first_header} is followed by the end block")
            _drain(chunks)
            return
        kind, size, header_name = _header(block, url, at)
        if first_header is None:
            first_header = at
        if kind in _PAX:
            records = _pax_records(_data(chunks, size, url, at), url, at)
            (global_pax if kind == tarfile.XGLTYPE else pax).update(records)
            continue
        if kind in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK):
            data = _data(chunks, size, url, at)
            if kind == tarfile.GNUTYPE_LONGNAME:
                long_name = data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            continue
        name = pax.get("path") or global_pax.get("path") or long_name or header_name
        if "size" in pax or "size" in global_pax:
            size = _pax_size(pax.get("size", global_pax.get("size", "")), url, at)
        if kind == tarfile.GNUTYPE_SPARSE or any(k.startswith("GNU.sparse") for k in pax):
            raise ArchiveError(f"{url}: member {name!r} at offset {at} is a sparse file; "
                               "shards cannot hold sparse members")
        if kind in _REGULAR and not name.endswith("/"):
            data = _data(chunks, size, url, at)
            yield Member(name, data, first_header, chunks.offset)
        elif size and kind not in (tarfile.LNKTYPE, tarfile.SYMTYPE):
            _data(chunks, size, url, at)  # a directory or device with data: skipped
        pax, long_name, first_header = {}, None, None


def _header(block: bytes, url: str, at: int) -> tuple[bytes, int, str]:
    """The type, size and name of the header ``block``.

    The common header (ustar or GNU magic, an octal size, a checksum that adds up) is read
    field by field, which costs a fraction of :meth:`tarfile.TarInfo.frombuf`; anything else
    (v7 headers, base-256 sizes, signed checksums, damage) goes through ``frombuf``, which
    also says what is wrong.
    """
    magic, size_field = block[257:263], block[124:136]
    if magic in _MAGICS and not size_field[0] & 0x80:
        try:
            stored = int(block[148:156].split(b"\0", 1)[0].strip() or b"0", 8)
            size = int(size_field.split(b"\0", 1)[0].strip() or b"0", 8)
        except ValueError:
            stored = size = -1
        if stored == sum(block) - sum(block[148:156]) + 256 and size >= 0:
            kind = block[156:157]
            name = block[:100].split(b"\0", 1)[0]
            if magic == _POSIX_MAGIC and block[345] and kind not in tarfile.GNU_TYPES:
                name = block[345:500].split(b"\0", 1)[0] + b"/" + name
            if kind == tarfile.AREGTYPE and name.endswith(b"/"):
                kind = tarfile.DIRTYPE
            if kind == tarfile.DIRTYPE:
                name = name.rstrip(b"/")
            return kind, size, name.decode("utf-8", "surrogateescape")
    try:
        info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError as exc:
        raise ArchiveError(f"{url}: corrupt tar header at offset {at} ({exc})") from None
    return info.type, info.size, info.name


def _data(chunks: _Chunks, size: int, url: str, at: int) -> bytes:
    """A member's ``size`` bytes and its padding to a whole block."""
    data = chunks.take(size)
    pad = -size % BLOCK
    if len(data) < size or chunks.skip(pad) < pad:
        raise ArchiveError(f"{url}: truncated tar archive: the data of the member whose "
                           f"header is at offset {at} is cut short")
    return data


def _pax_records(data: bytes, url: str, at: int) -> dict[str, str]:
    """The ``length key=value\\n`` records of a pax extended header."""
    records: dict[str, str] = {}
    pos = 0
    while pos < len(data) and data[pos] != 0:
        space = data.find(b" ", pos)
        try:
            length = int(data[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        end = pos + length
        if length <= 0 or end > len(data) or data[end - 1] != 0x0A:
            raise ArchiveError(f"{url}: corrupt pax header at offset {at}")
        key, sep, value = data[space + 1:end - 1].partition(b"=")
        if not sep:
            raise ArchiveError(f"{url}: corrupt pax record at offset {at}")
        records[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8",
                                                                       "surrogateescape")
        pos = end
    return records


def _pax_size(value: str, url: str, at: int) -> int:
    if not value.isdigit():
        raise ArchiveError(f"{url}: corrupt pax size {value!r} at offset {at}")
    return int(value)


def _drain(chunks: _Chunks) -> None:
    """Read what follows the end block (the record's padding), up to a limit."""
    skipped = chunks.skip(TRAILER_LIMIT)
    if skipped == TRAILER_LIMIT:
        logger.debug("more than %d bytes follow the end of a tar archive; not read",
                     TRAILER_LIMIT)
