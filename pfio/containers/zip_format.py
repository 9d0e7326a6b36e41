"""The zip central directory, read with :mod:`struct` (no :mod:`zipfile`).

Opening an archive costs at most two reads of the backing file: one read of its tail finds
the end-of-central-directory record (and the zip64 records before it) and usually covers the
whole central directory too; when the directory starts before the tail, one more read fetches
it. Each central-directory record becomes a :data:`CentralRecord` tuple.

Supported: zip64 (end records and the extra fields with 64-bit sizes and offsets), more than
65,535 members, archives with data before them (offsets relative to the start of the zip,
as self-extracting archives have), UTF-8 names (flag bit 11) and cp437 names otherwise.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..errors import ArchiveError

# the end-of-central-directory record, fixed part
EOCD = struct.Struct("<4s4H2LH")
EOCD_SIG = b"PK\x05\x06"
# the zip64 end-of-central-directory locator and record
LOCATOR = struct.Struct("<4sLQL")
LOCATOR_SIG = b"PK\x06\x07"
EOCD64 = struct.Struct("<4sQ2H2L4Q")
EOCD64_SIG = b"PK\x06\x06"
# a central-directory file header, fixed part
CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
CENTRAL_SIG = b"PK\x01\x02"
# a local file header, fixed part
LOCAL = struct.Struct("<4s2B4HL2L2H")
LOCAL_SIG = b"PK\x03\x04"

#: how much of the end of an archive the first read takes: the largest comment plus the record
TAIL_SIZE = 65536 + EOCD.size

FLAG_ENCRYPTED = 0x1
FLAG_UTF8 = 0x800
ZIP64_EXTRA = 0x0001
_MAX32 = 0xFFFFFFFF
_MAX16 = 0xFFFF
_SYSTEM_UNIX = 3


class Provenance(NamedTuple):
    """The fields of a central-directory record that say how and where a member was made,
    as :class:`zipfile.ZipInfo` names them. Archives repeat few combinations of them, so
    members share one tuple per combination."""

    create_version: int = 20
    create_system: int = _SYSTEM_UNIX
    extract_version: int = 20
    volume: int = 0
    internal_attr: int = 0
    external_attr: int = 0
    comment: bytes = b""


class MemberInfo(NamedTuple):
    """Where a member is and how to decode it (``Entry.info`` of a zip member)."""

    header_offset: int
    compressed_size: int
    method: int
    crc: int
    flags: int
    #: the central directory's name + extra length: the guess for the local header's
    local_guess: int
    #: the rest of the member's central-directory record
    provenance: Provenance = Provenance()


#: one member as the central directory describes it: ``(name, size, mtime, mode, info)``
CentralRecord = tuple[str, int, "float | None", "int | None", MemberInfo]


def read_central_directory(
    read_tail: Callable[[int], tuple[int, bytes]],
    read_at: Callable[[int, int], bytes],
    archive: str,
) -> Iterator[CentralRecord]:
    """Yield the members (:data:`CentralRecord`) of the archive whose bytes
    ``read_tail``/``read_at`` return.

    Raises:
        ArchiveError: no end record (not a zip, or truncated), a zip64 record missing or
            corrupt, a central directory cut short or with bad signatures, offsets beyond
            the file.
    """
    tail_start, tail = read_tail(TAIL_SIZE)
    file_size = tail_start + len(tail)
    eocd_at = _find_eocd(tail, archive, file_size)
    (_, disk, cd_disk, _, count, cd_size, cd_offset, _) = EOCD.unpack_from(tail, eocd_at)
    cd_end = tail_start + eocd_at  # where the directory should end (absolute)
    if _MAX16 in (disk, cd_disk, count) or _MAX32 in (cd_size, cd_offset) or (
        eocd_at >= LOCATOR.size and tail[eocd_at - LOCATOR.size:eocd_at - 16] == LOCATOR_SIG
    ):
        count, cd_size, cd_offset, cd_end = _zip64_end(tail, tail_start, eocd_at, read_at,
                                                       archive)
    elif disk != cd_disk:
        raise ArchiveError(f"{archive}: multi-disk (spanned) zip archives are not supported")
    # data before the archive shifts every offset the archive records
    shift = cd_end - cd_size - cd_offset
    if shift < 0:
        raise ArchiveError(f"{archive}: the central directory ({cd_size} bytes at offset "
                           f"{cd_offset}) extends past the end of the file: truncated archive")
    cd_start = cd_offset + shift
    if cd_start >= tail_start:
        directory = tail[cd_start - tail_start:cd_end - tail_start]
    else:
        directory = read_at(cd_start, cd_size)
        if len(directory) != cd_size:
            raise ArchiveError(f"{archive}: the central directory is cut short: truncated "
                               "archive")
    return _records(directory, shift, cd_start, count, archive)


def _find_eocd(tail: bytes, archive: str, file_size: int) -> int:
    """The position of the end record in ``tail``: the last signature whose comment ends
    exactly at the end of the file, else (bytes appended after the archive) the last one whose
    comment fits."""
    at = len(tail)
    fallback = -1
    while True:
        at = tail.rfind(EOCD_SIG, 0, at)
        if at < 0:
            break
        if at + EOCD.size <= len(tail):
            comment_end = at + EOCD.size + EOCD.unpack_from(tail, at)[-1]
            if comment_end == len(tail):
                return at
            if comment_end < len(tail) and fallback < 0:
                fallback = at
    if fallback < 0:
        what = "an empty file" if not file_size else "no end-of-central-directory record"
        raise ArchiveError(f"{archive} is not a zip archive ({what}) or it is truncated")
    return fallback


def _zip64_end(tail: bytes, tail_start: int, eocd_at: int,
               read_at: Callable[[int, int], bytes], archive: str) -> tuple[int, int, int, int]:
    """``(count, cd_size, cd_offset, cd_end)`` from the zip64 locator and end record."""
    at = eocd_at - LOCATOR.size
    if at < 0 or tail[at:at + 4] != LOCATOR_SIG:
        raise ArchiveError(f"{archive}: the zip64 end-of-central-directory locator is missing: "
                           "corrupt or truncated archive")
    _, _, record_offset, disks = LOCATOR.unpack_from(tail, at)
    if disks > 1:
        raise ArchiveError(f"{archive}: multi-disk (spanned) zip archives are not supported")
    # the record sits just before the locator (its recorded offset is off when data precedes
    # the archive)
    record_at = at - EOCD64.size
    if record_at >= 0 and tail[record_at:record_at + 4] == EOCD64_SIG:
        record = tail[record_at:at]
        cd_end = tail_start + record_at
    else:
        record = read_at(record_offset, EOCD64.size)
        cd_end = record_offset
    if len(record) < EOCD64.size or record[:4] != EOCD64_SIG:
        raise ArchiveError(f"{archive}: the zip64 end-of-central-directory record is missing "
                           "or corrupt")
    _, _, _, _, _, _, _, count, cd_size, cd_offset = EOCD64.unpack_from(record)
    return count, cd_size, cd_offset, cd_end


def _records(directory: bytes, shift: int, cd_start: int, count: int,
             archive: str) -> Iterator[CentralRecord]:
    unpack = CENTRAL.unpack_from
    fixed = CENTRAL.size
    end = len(directory)
    mtimes: dict[int, float | None] = {}
    modes: dict[int | None, int | None] = {}
    provenances: dict[Provenance, Provenance] = {}
    pos = 0
    seen = 0
    while pos < end:
        record = unpack(directory, pos) if pos + fixed <= end else (None,)
        if record[0] != CENTRAL_SIG:
            raise ArchiveError(f"{archive}: bad central directory record #{seen} at offset "
                               f"{cd_start + pos}: corrupt archive")
        (_, create_version, system, extract_version, _, flags, method, dos_time, dos_date, crc,
         csize, size, name_len, extra_len, comment_len, volume, internal_attr, ext_attr,
         offset) = record
        name_end = pos + fixed + name_len
        extra_end = name_end + extra_len
        if extra_end + comment_len > end:
            raise ArchiveError(f"{archive}: central directory record #{seen} is cut short: "
                               "corrupt archive")
        name = directory[pos + fixed:name_end].decode("utf-8" if flags & FLAG_UTF8 else "cp437")
        if _MAX32 in (size, csize, offset):
            size, csize, offset = _zip64_fields(directory[name_end:extra_end], size, csize,
                                                offset, archive, name)
        offset += shift
        if offset + LOCAL.size + csize > cd_start:
            raise ArchiveError(f"{archive}: member {name!r} lies beyond the start of the "
                               f"central directory (offset {offset}, {csize} bytes): corrupt "
                               "archive")
        stamp = dos_date << 16 | dos_time
        if stamp in mtimes:
            mtime = mtimes[stamp]
        else:
            mtime = mtimes[stamp] = _dos_time(dos_date, dos_time)
        mode = ext_attr >> 16 if system == _SYSTEM_UNIX and ext_attr >> 16 else None
        mode = modes.setdefault(mode, mode)  # one int object per distinct mode
        provenance = Provenance(create_version, system, extract_version, volume, internal_attr,
                                ext_attr, directory[extra_end:extra_end + comment_len])
        provenance = provenances.setdefault(provenance, provenance)
        yield name, size, mtime, mode, MemberInfo(offset, csize, method, crc, flags,
                                                  name_len + extra_len, provenance)
        pos = extra_end + comment_len
        seen += 1
    if count != seen and count != seen & _MAX16:
        raise ArchiveError(f"{archive}: the central directory lists {seen} members, the end "
                           f"record says {count}: corrupt archive")


def _zip64_fields(extra: bytes, size: int, csize: int, offset: int, archive: str,
                  name: str) -> tuple[int, int, int]:
    """Replace the 32-bit fields set to 0xFFFFFFFF by those of the zip64 extra field."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, pos)
        if tag == ZIP64_EXTRA:
            body = extra[pos + 4:pos + 4 + length]
            values = []
            for i in range(len(body) // 8):
                values.append(struct.unpack_from("<Q", body, 8 * i)[0])
            try:
                if size == _MAX32:
                    size = values.pop(0)
                if csize == _MAX32:
                    csize = values.pop(0)
                if offset == _MAX32:
                    offset = values.pop(0)
            except IndexError:
                break
            return size, csize, offset
        pos += 4 + length
    raise ArchiveError(f"{archive}: member {name!r} needs a zip64 extra field, which is missing "
                       "or too short: corrupt archive")


def _dos_time(dos_date: int, dos_time: int) -> float | None:
    """A DOS date and time (local time, 2-second steps) as a UNIX timestamp."""
    fields = (
        (dos_date >> 9) + 1980, (dos_date >> 5) & 0xF, dos_date & 0x1F,
        dos_time >> 11, (dos_time >> 5) & 0x3F, (dos_time & 0x1F) * 2, 0, 0, -1,
    )
    try:
        return time.mktime(fields)
    except (OverflowError, ValueError):
        return None


def local_data_offset(header: bytes, pos: int, archive: str, name: str) -> tuple[int, int]:
    """``(data_start, extra_len)`` of the local header at ``header[pos:]`` relative to ``pos``.

    Raises:
        ArchiveError: the local header's signature is wrong or it is cut short.
    """
    if len(header) - pos < LOCAL.size or header[pos:pos + 4] != LOCAL_SIG:
        raise ArchiveError(f"{archive}: bad local header of member {name!r}: corrupt or "
                           "truncated archive")
    name_len, extra_len = struct.unpack_from("<2H", header, pos + 26)
    return LOCAL.size + name_len + extra_len, extra_len
