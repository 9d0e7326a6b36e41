"""The name index of a tar archive, built in one pass over its headers.

:func:`~pfio.containers.tar_format.read_members` parses the headers (ustar, GNU and pax
formats: long names, pax records, sparse maps) and seeks over the members' data; each
regular member's entry records where its data starts. Hard and symbolic links are resolved
to their target's data when the target is a regular member of the archive; devices and
fifos are left out. A corrupt or truncated archive raises
:class:`~pfio.errors.ArchiveError` naming the archive and what is wrong; an archive may
end without its end-of-archive blocks, as :mod:`tarfile` reads it.
"""

from __future__ import annotations

import io
import logging
import posixpath
import stat as _stat
import tarfile
from typing import IO, Any, NamedTuple

from .names import ArchiveIndex, Entry, normalize_member_name
from .tar_format import REGULAR, SPARSE, Member, read_members
from .tar_sources import DECODE_ERRORS, Seeking, decode_error

logger = logging.getLogger(__name__)

_MAX_LINK_HOPS = 40


class Unreadable(NamedTuple):
    """A name that is listed but cannot be opened: the error to raise and why."""

    error: type[Exception]
    reason: str


def scan(fileobj: IO[bytes], archive: str) -> ArchiveIndex:
    """Read every header of the tar stream ``fileobj`` (seekable, positioned at its start)
    and return the index. Each regular member's ``Entry.info`` is the offset of its data in
    the tar stream; links resolve to their target's, or to :class:`Unreadable`, as do
    sparse members.

    Raises:
        ArchiveError: not a tar archive, a corrupt header, data cut short.
    """
    index = ArchiveIndex(archive)
    links: list[Entry] = []
    try:
        for member in read_members(Seeking(fileobj), archive, require_end=False):
            _add(index, member, links)
    except DECODE_ERRORS as exc:
        raise decode_error(archive, exc) from exc
    for entry in links:
        _resolve(index, entry)
    return index


def _add(index: ArchiveIndex, member: Member, links: list[Entry]) -> None:
    fields: dict[str, Any] = {"mtime": member.mtime, "mode": member.mode & 0o7777}
    kind = member.kind
    if kind == tarfile.DIRTYPE:
        index.add(member.name, True, **fields)
    elif kind == SPARSE:
        reason = "is a sparse file; pfio does not read sparse tar members"
        index.add(member.name, False, size=member.size,
                  info=Unreadable(io.UnsupportedOperation, reason), **fields)
    elif kind in REGULAR:
        index.add(member.name, False, size=member.size, info=member.offset, **fields)
    elif kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        if kind == tarfile.SYMTYPE:
            fields["mode"] = _stat.S_IFLNK | 0o777
        entry = index.add(member.name, False, info=member, **fields)
        if entry is not None:
            links.append(entry)
    else:
        logger.debug("%s: skipping %r (not a file, directory or link)", index.archive_name,
                     member.name)


def _resolve(index: ArchiveIndex, entry: Entry) -> None:
    """Point a link's entry (whose ``info`` is the link's :class:`Member`) at its final
    target's data (or mark it unreadable)."""
    current = entry
    for _ in range(_MAX_LINK_HOPS):
        link = current.info
        if not isinstance(link, Member):
            break
        key = _target_key(current.name, link)
        target = None if key is None else index.entries.get(key)
        if target is None:
            where = "outside the archive" if key is None else "to a name not in the archive"
            entry.info = Unreadable(FileNotFoundError,
                                    f"is a link {where} ({link.linkname!r})")
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


def _target_key(name: str, link: Member) -> str | None:
    """The index key a link points to; None when it points outside the archive."""
    if link.kind != tarfile.SYMTYPE:
        return normalize_member_name(link.linkname)
    if link.linkname.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), link.linkname))
    if joined == ".." or joined.startswith("../"):
        return None
    return normalize_member_name(joined)
