"""Tar headers read front to back: the one tar reader of the container and the shards.

:func:`read_members` walks the headers of a tar stream and yields a :class:`Member` for
each member: its name (ustar prefix, GNU long names and long links, pax ``path``,
``linkpath``, ``size`` and ``mtime`` records applied), its type, size, mode and mtime, where
its first header, its data and its end are, and (when asked) its data. Common headers are
decoded field by field; others (v7 headers, base-256 numbers, signed checksums, damage) by
:meth:`tarfile.TarInfo.frombuf`. Sparse members (old GNU and pax formats) are recognised
(type :data:`SPARSE`, their real size) and their data is never read. Data follows regular
members and members of unknown types; links, directories, devices and fifos have none,
as :mod:`tarfile` reads them.

Two sources (:mod:`.tar_sources`) feed it: ``Chunks`` reads on in large chunks (a shard
streamed front to back, every member's data wanted: :func:`iter_tar`), ``Seeking`` reads
the headers of a seekable file and seeks over the data (the index of :mod:`.tar_index`).
Everything is
checked: a header that does not decode, data cut short, a stream that ends inside a header
or (where the end block is required) before the end-of-archive block raise
:class:`~pfio.errors.ArchiveError` naming the archive and the offset.
"""

from __future__ import annotations

import logging
import tarfile
import zlib
from collections.abc import Iterator
from typing import IO, NamedTuple

from ..errors import ArchiveError
from .tar_sources import Chunks, Source

logger = logging.getLogger(__name__)

BLOCK = tarfile.BLOCKSIZE
#: the types of regular members, and of sparse ones
REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)
SPARSE = tarfile.GNUTYPE_SPARSE
#: types no data follows (whatever their size field says)
_NO_DATA = (tarfile.LNKTYPE, tarfile.SYMTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE,
            tarfile.DIRTYPE, tarfile.FIFOTYPE)
_EXTENDED = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE,
             tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
_ZERO_BLOCK = bytes(BLOCK)
_POSIX_MAGIC = b"ustar\0"
_MAGICS = (_POSIX_MAGIC, b"ustar ")  # POSIX ustar and GNU tar (``ustar  \0``)
_FIELD_ENDS = (0, 0x20)
_LOW_BITS = int.from_bytes(b"\1" * BLOCK, "little")


class Member(NamedTuple):
    """A member of a tar stream (or of a zip shard: its name, data and index only).

    ``position`` is where its first header starts (extended headers included: the place to
    start reading again to get it next), ``offset`` where its data starts, ``end`` where
    its data and padding end (0 where unknown); ``data`` is its bytes where the reader read
    them. A sparse member's ``size`` is the size of the file it stands for.
    """

    name: str
    data: bytes = b""
    position: int = 0
    end: int = 0
    offset: int = 0
    size: int = 0
    kind: bytes = tarfile.REGTYPE
    mtime: float = 0.0
    mode: int = 0o644
    linkname: str = ""


def read_members(source: Source, archive: str, *, with_data: bool = False,
                 stop: int | None = None, require_end: bool = True) -> Iterator[Member]:
    """Every member of the tar stream ``source`` (at a header boundary), in archive order.

    Args:
        source: where the bytes come from.
        archive: names the archive in errors.
        with_data: read the data of regular members into :attr:`Member.data` (else it is
            skipped).
        stop: an offset (a header boundary) where the stream may end: only the members
            before it are read (a span of an archive).
        require_end: the archive must end with an end-of-archive block (else it may also
            end at a header boundary, or in zero bytes, as :mod:`tarfile` reads it).

    Raises:
        ArchiveError: a corrupt header, data cut short, an extended header without its
            member, a missing end-of-archive block (with ``require_end``).
    """
    pax: dict[str, str] = {}
    global_pax: dict[str, str] = {}
    long_name: str | None = None
    long_link: str | None = None
    pending = False  # extended headers (other than global ones) wait for their member
    first = -1  # the offset of the first header of the member being read
    at = source.offset
    while True:
        if stop is not None and at >= stop and not pending:
            return
        block = source.take(BLOCK)
        if len(block) < BLOCK or block == _ZERO_BLOCK:
            _check_end(block, at, first if pending else None, archive, require_end)
            if len(block) == BLOCK:
                source.finish()
            return
        kind, size, name = _header(block, archive, at)
        if first < 0:
            first = at
        if kind in _EXTENDED:
            data = _extended(source, size, archive, at)
            if kind == tarfile.GNUTYPE_LONGNAME:
                long_name = _text(data)
            elif kind == tarfile.GNUTYPE_LONGLINK:
                long_link = _text(data)
            else:
                records = _pax_records(data, archive, at)
                (global_pax if kind == tarfile.XGLTYPE else pax).update(records)
            pending = pending or kind != tarfile.XGLTYPE
            at += BLOCK + size + (-size % BLOCK)
            continue
        mode, mtime, linkname = _details(block, archive, at)
        offset = at + BLOCK
        stored = size  # the bytes of data in the stream (a sparse file's are fewer)
        if kind == SPARSE:
            size, extension = _old_sparse(block, source, archive, at)
            offset += extension
        if pending or global_pax:
            name, kind, size, stored, mtime, linkname = _extend(
                {**global_pax, **pax}, long_name, long_link, name, kind, size, stored, mtime,
                linkname, archive, at)
        data = b""
        if kind in _NO_DATA:
            end = offset
        else:
            end = offset + stored + (-stored % BLOCK)
            if with_data and kind in REGULAR:
                data = source.take(stored)
                ok = len(data) == stored and source.skip(end - offset - stored)
            else:
                ok = source.skip(end - offset)
            if not ok:
                raise ArchiveError(f"{archive}: truncated tar archive: the data of the member "
                                   f"whose header is at offset {at} is cut short")
        yield Member(name, data, first, end, offset, size, kind, mtime, mode, linkname)
        at, first = end, -1
        if pending:
            pax, long_name, long_link, pending = {}, None, None, False


def _extend(records: dict[str, str], long_name: str | None, long_link: str | None,
            name: str, kind: bytes, size: int, stored: int, mtime: float, linkname: str,
            archive: str, at: int) -> tuple[str, bytes, int, int, float, str]:
    """A header's name, type, size, stored size, mtime and link name, with the GNU long
    names and pax ``records`` that came before it applied."""
    if long_name is not None:
        name = long_name.removesuffix("/") if kind == tarfile.DIRTYPE else long_name
    if long_link is not None:
        linkname = long_link
    name = records.get("GNU.sparse.name") or records.get("path") or name
    linkname = records.get("linkpath", linkname)
    if "size" in records:
        stored = _pax_size(records["size"], archive, at)
        size = size if kind == SPARSE else stored
    if "mtime" in records:
        mtime = _pax_time(records["mtime"])
    if _pax_sparse(records):
        kind = SPARSE
        real = records.get("GNU.sparse.realsize") or records.get("GNU.sparse.size")
        size = stored if real is None else _pax_size(real, archive, at)
    return name, kind, size, stored, mtime, linkname


def iter_tar(f: IO[bytes], archive: str, start: int = 0,
               stop: int | None = None) -> Iterator[Member]:
    """The regular members of the tar stream ``f`` with their data, read front to back in
    large reads; ``f``'s next byte is at offset ``start`` of the tar stream (a header
    boundary); with ``stop``, the members before that offset (a header boundary where ``f``
    may end: a span of the archive). Directories, links, devices and fifos are skipped; the
    stream must end with the end-of-archive block (read, with the record's padding).

    Raises:
        ArchiveError: as :func:`read_members` raises it, and for a sparse member.
    """
    for member in read_members(Chunks(f, start), archive, with_data=True, stop=stop):
        if member.kind == SPARSE:
            raise ArchiveError(f"{archive}: member {member.name!r} at offset "
                               f"{member.position} is a sparse file; pfio does not read "
                               "sparse tar members")
        if member.kind in REGULAR and not member.name.endswith("/"):
            yield member


def _check_end(block: bytes, at: int, pending: int | None, archive: str,
               require_end: bool) -> None:
    """Whether ``block`` (less than a block, or zeros) at offset ``at`` ends the archive
    properly; ``pending`` is the offset of an extended header waiting for its member."""
    if not block and at == 0:
        raise ArchiveError(f"{archive}: empty file, not a tar archive")
    if len(block) < BLOCK and block.strip(b"\0"):
        raise ArchiveError(f"{archive}: truncated tar archive: the header at offset {at} "
                           "is cut short")
    if pending is not None:
        if len(block) == BLOCK:
            raise ArchiveError(f"{archive}: corrupt tar archive: an extended header at "
                               f"offset {pending} is followed by the end block")
        raise ArchiveError(f"{archive}: truncated tar archive: the extended header at offset "
                           f"{pending} is not followed by a member")
    if len(block) == BLOCK:
        return
    if require_end:
        what = "the end-of-archive block is cut short" if block else "no end-of-archive block"
        raise ArchiveError(f"{archive}: truncated tar archive at offset {at} ({what})")
    if block:
        logger.debug("%s: the end-of-archive blocks are cut short", archive)


def _header(block: bytes, archive: str, at: int) -> tuple[bytes, int, str]:
    """The type, size and name of the header ``block``.

    The common header (ustar or GNU magic, an octal size, a checksum that adds up) is read
    field by field, which costs a fraction of :meth:`tarfile.TarInfo.frombuf`; anything else
    (v7 headers, base-256 sizes, signed checksums, damage) goes through ``frombuf``, which
    also says what is wrong.
    """
    magic = block[257:263]
    if magic in _MAGICS and not block[124] & 0x80:
        try:
            cut = block.find(0, 148, 156)
            stored = int(block[148:cut if cut >= 0 else 156], 8)
            cut = block.find(0, 124, 136)
            size = int(block[124:cut if cut >= 0 else 136], 8)
        except ValueError:  # (an empty field among them: frombuf reads it as 0)
            stored = size = -1
        if stored == _byte_sum(block) - sum(block[148:156]) + 256 and size >= 0:
            kind = block[156:157]
            cut = block.find(0, 0, 100)
            name = block[:cut if cut >= 0 else 100]
            if magic == _POSIX_MAGIC and block[345] and kind not in tarfile.GNU_TYPES:
                cut = block.find(0, 345, 500)
                name = block[345:cut if cut >= 0 else 500] + b"/" + name
            if kind == tarfile.AREGTYPE and name.endswith(b"/"):
                kind = tarfile.DIRTYPE
            if kind == tarfile.DIRTYPE:
                name = name.rstrip(b"/")
            return kind, size, name.decode("utf-8", "surrogateescape")
    info = _frombuf(block, archive, at)
    return info.type, info.size, info.name


def _byte_sum(block: bytes) -> int:
    """``sum(block)`` for a block of 512 bytes, in a fraction of its time: Adler-32 gives
    the sum modulo 65,521, which leaves two candidates below 512 * 255 (the sum and that
    plus 65,521, an odd number); the parity of the sum (the number of odd bytes) picks one.
    """
    low = ((zlib.adler32(block) & 0xFFFF) - 1) % 65521
    odd = (int.from_bytes(block, "little") & _LOW_BITS).bit_count() & 1
    return low if low & 1 == odd else low + 65521


def _details(block: bytes, archive: str, at: int) -> tuple[int, float, str]:
    """The mode, mtime and link name of the header ``block`` (whose checksum is right).

    Octal fields ended by a NUL or a space are read straight; anything else (base-256
    numbers, fields of digits to their last byte, damage) goes through ``frombuf``."""
    if block[107] in _FIELD_ENDS and block[147] in _FIELD_ENDS:
        try:
            mode = int(block[100:107], 8)
            mtime = int(block[136:147], 8)
        except ValueError:
            pass
        else:
            return mode, float(mtime), _text(block[157:257]) if block[157] else ""
    info = _frombuf(block, archive, at)
    return info.mode, float(info.mtime), info.linkname


def _frombuf(block: bytes, archive: str, at: int) -> tarfile.TarInfo:
    try:
        return tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError as exc:
        if at == 0:
            raise ArchiveError(f"{archive}: not a tar archive, or a corrupt one (corrupt tar "
                               f"header at offset 0: {exc})") from None
        raise ArchiveError(f"{archive}: corrupt tar header at offset {at} ({exc})") from None


def _text(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _extended(source: Source, size: int, archive: str, at: int) -> bytes:
    """The data of an extended header (``size`` bytes and their padding)."""
    padded = size + (-size % BLOCK)
    data = source.take(padded)
    if len(data) < padded:
        raise ArchiveError(f"{archive}: truncated tar archive: the data of the member whose "
                           f"header is at offset {at} is cut short")
    return data[:size]


def _old_sparse(block: bytes, source: Source, archive: str, at: int) -> tuple[int, int]:
    """The real size of an old GNU sparse member whose header is ``block``, and the bytes
    of its extension blocks (more of the sparse map, read past)."""
    extended, read = block[482], 0
    while extended:
        more = source.take(BLOCK)
        if len(more) < BLOCK:
            raise ArchiveError(f"{archive}: truncated tar archive: the sparse map of the "
                               f"member whose header is at offset {at} is cut short")
        extended, read = more[504], read + BLOCK
    field = block[483:495]
    if field[0] == 0x80:  # GNU's base-256
        return int.from_bytes(field[1:], "big"), read
    try:
        return int(field.split(b"\0", 1)[0].strip() or b"0", 8), read
    except ValueError:
        raise ArchiveError(f"{archive}: corrupt tar header at offset {at} (the real size of "
                           "a sparse member)") from None


def _pax_records(data: bytes, archive: str, at: int) -> dict[str, str]:
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
            raise ArchiveError(f"{archive}: corrupt pax header at offset {at}")
        key, sep, value = data[space + 1:end - 1].partition(b"=")
        if not sep:
            raise ArchiveError(f"{archive}: corrupt pax record at offset {at}")
        records[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8",
                                                                       "surrogateescape")
        pos = end
    return records


def _pax_size(value: str, archive: str, at: int) -> int:
    if not value.isdigit():
        raise ArchiveError(f"{archive}: corrupt pax size {value!r} at offset {at}")
    return int(value)


def _pax_time(value: str) -> float:
    """A pax ``mtime`` (seconds, maybe with a fraction; 0 when it does not read, as
    :mod:`tarfile` has it)."""
    try:
        return float(value)
    except ValueError:
        return 0.0


def _pax_sparse(records: dict[str, str]) -> bool:
    """Whether pax ``records`` describe a sparse member (GNU's formats 0.0, 0.1 and 1.0)."""
    return "GNU.sparse.map" in records or "GNU.sparse.size" in records or (
        records.get("GNU.sparse.major") == "1" and records.get("GNU.sparse.minor") == "0")
