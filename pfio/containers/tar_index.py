"""The name index of a tar archive, built in one pass over its headers.

:mod:`tarfile` parses the headers (ustar, GNU and pax formats: long names, pax records,
sparse maps); :func:`scan` records where each regular member's data starts and how long it
is. Hard and symbolic links are resolved to their target's data when the target is a
regular member of the archive; devices and fifos are left out. A corrupt or truncated
archive raises :class:`~pfio.errors.ArchiveError` naming the archive and what is wrong
(:mod:`tarfile` itself stops silently at a bad header after the first).
"""

from __future__ import annotations

import gzip
import io
import logging
import posixpath
import stat as _stat
import tarfile
import zlib
from typing import IO, Any, NamedTuple

from ..errors import ArchiveError
from .names import ArchiveIndex, Entry, normalize_member_name

logger = logging.getLogger(__name__)

#: what decompressing a truncated or corrupt ``.tar.gz`` raises
DECODE_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)

_MAX_LINK_HOPS = 40


class Member(NamedTuple):
    """Where a member's data is in the (uncompressed) tar stream."""

    offset: int
    size: int


class Link(NamedTuple):
    """A link not resolved yet: ``target`` as the header has it."""

    symbolic: bool
    target: str


class Unreadable(NamedTuple):
    """A name that is listed but cannot be opened: the error to raise and why."""

    error: type[Exception]
    reason: str


def decode_error(archive: str, exc: BaseException) -> ArchiveError:
    """The :class:`ArchiveError` for a decompression error ``exc`` of ``archive``."""
    if isinstance(exc, EOFError):
        return ArchiveError(f"{archive}: truncated compressed archive ({exc})")
    return ArchiveError(f"{archive}: corrupt compressed archive ({exc})")


def read_to_end(stream: IO[bytes], archive: str, chunk: int = 1 << 20) -> int:
    """Read the decompressing ``stream`` to its end, so that :mod:`gzip` checks the trailer
    of every gzip member (the CRC-32 and length of its data: without it a flipped byte in
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


class _LastRead:
    """A file object that remembers the last block read from it (the header at which
    :mod:`tarfile` stopped, so that the end of the archive can be checked without seeking
    back in a compressed stream)."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self.last = b""

    def read(self, size: int = -1) -> bytes:
        self.last = self._f.read(size)
        return self.last

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()


def scan(fileobj: IO[bytes], archive: str) -> ArchiveIndex:
    """Read every header of the tar stream ``fileobj`` (positioned at its start) and return
    the index. Each regular member's ``Entry.info`` is a :class:`Member`; links resolve to
    their target's :class:`Member`, or to :class:`Unreadable`, as do sparse members.

    Raises:
        ArchiveError: not a tar archive, a corrupt header, data cut short.
    """
    index = ArchiveIndex(archive)
    links: list[Entry] = []
    recorder = _LastRead(fileobj)
    try:
        tar = tarfile.TarFile(fileobj=recorder, mode="r",  # type: ignore[arg-type]
                              errors="surrogateescape")
        while True:
            info = tar.next()
            if info is None:
                break
            tar.members.clear()  # the index is all we keep
            _add(index, info, links)
        _check_end(recorder.last, tar.offset, archive)
    except tarfile.ReadError as exc:
        if str(exc) == "unexpected end of data":
            raise ArchiveError(f"{archive}: truncated archive: the data of a member is cut "
                               "short") from exc
        raise ArchiveError(f"{archive}: not a tar archive, or a corrupt one ({exc})") from exc
    except tarfile.TarError as exc:
        raise ArchiveError(f"{archive}: corrupt tar archive ({exc})") from exc
    except DECODE_ERRORS as exc:
        raise decode_error(archive, exc) from exc
    for entry in links:
        _resolve(index, entry)
    return index


def _check_end(block: bytes, offset: int, archive: str) -> None:
    """Tell a proper end (zero blocks, or no more data) from a header :mod:`tarfile`
    could not read after the first member."""
    if not block.strip(b"\0"):
        if block and len(block) < tarfile.BLOCKSIZE:
            logger.debug("%s: the end-of-archive blocks are cut short", archive)
        return
    if len(block) < tarfile.BLOCKSIZE:
        raise ArchiveError(f"{archive}: truncated archive: the header at offset {offset} is "
                           "cut short")
    try:
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
        reason = "unreadable header"
    except tarfile.HeaderError as exc:
        reason = str(exc)
    raise ArchiveError(f"{archive}: corrupt tar header at offset {offset} ({reason})")


def _add(index: ArchiveIndex, info: tarfile.TarInfo, links: list[Entry]) -> None:
    fields: dict[str, Any] = {"mtime": float(info.mtime), "mode": info.mode & 0o7777}
    if info.isdir():
        index.add(info.name, True, **fields)
    elif info.issparse():
        reason = "is a sparse file; pfio does not read sparse tar members"
        index.add(info.name, False, size=info.size,
                  info=Unreadable(io.UnsupportedOperation, reason), **fields)
    elif info.isreg():
        index.add(info.name, False, size=info.size,
                  info=Member(info.offset_data, info.size), **fields)
    elif info.issym() or info.islnk():
        if info.issym():
            fields["mode"] = _stat.S_IFLNK | 0o777
        entry = index.add(info.name, False, info=Link(info.issym(), info.linkname), **fields)
        if entry is not None:
            links.append(entry)
    else:
        logger.debug("%s: skipping %r (not a file, directory or link)", index.archive_name,
                     info.name)


def _resolve(index: ArchiveIndex, entry: Entry) -> None:
    """Point a link's entry at its final target's data (or mark it unreadable)."""
    current = entry
    for _ in range(_MAX_LINK_HOPS):
        link = current.info
        if not isinstance(link, Link):
            break
        key = _target_key(current.name, link)
        target = None if key is None else index.entries.get(key)
        if target is None:
            where = "outside the archive" if key is None else "to a name not in the archive"
            entry.info = Unreadable(FileNotFoundError,
                                    f"is a link {where} ({link.target!r})")
            return
        if target.is_dir:
            entry.info = Unreadable(IsADirectoryError,
                                    f"is a link to directory {target.name!r}")
            return
        current = target
    else:
        entry.info = Unreadable(OSError, "is a link in a loop (too many levels of links)")
        return
    entry.info, entry.size = current.info, current.size


def _target_key(name: str, link: Link) -> str | None:
    """The index key a link points to; None when it points outside the archive."""
    if not link.symbolic:
        return normalize_member_name(link.target)
    if link.target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), link.target))
    if joined == ".." or joined.startswith("../"):
        return None
    return normalize_member_name(joined)
