"""``Zip``: a zip archive opened as a filesystem, over a file from any filesystem.

Reading: the central directory is parsed once when the archive is opened (at most two reads
of the backing file, see :mod:`pfio.containers.zip_format`); ``exists``, ``stat`` and
``isdir`` are dictionary look-ups. A member up to ``whole_member_limit`` bytes costs one read
of the backing file (one ranged GET on S3) and is returned as an in-memory file; a larger one
is streamed in chunks (see :mod:`pfio.containers.zip_member`). CRC-32 is always checked.

Writing (``mode="w"``): a new archive is streamed to ``backend.open(path, "wb")`` and
published when the archive is closed (see :mod:`pfio.containers.zip_writer`).
"""

from __future__ import annotations

import io
import weakref
from typing import IO, Any

from ..errors import ArchiveError, MemberNotFoundError
from ..fs.base import FS, warn_unknown_options
from ..fs.file_types import as_binary_io
from ..fs.modes import Mode
from ..fs.stat import FileStat
from ..fs.writers import MemoryReader, text_reader
from .base import ArchiveFS
from .names import ArchiveIndex, Entry
from .zip_format import FLAG_ENCRYPTED, MemberInfo, Provenance, read_central_directory
from .zip_member import DEFLATED, STORED, check_readable, open_stream, read_member
from .zip_writer import ArchiveWriter, compress_type

__all__ = ["Zip", "ZipFileStat", "ArchiveError"]


class ZipFileStat(FileStat):
    """The :class:`~pfio.fs.stat.FileStat` of a zip member (or directory entry), with
    ``compressed_size``, ``crc32`` and ``compress_type`` (the zip method number), and the
    fields of :class:`zipfile.ZipInfo` that PFIO 2.x copied, under their names:
    ``orig_filename``, ``comment``, ``create_system``, ``create_version``,
    ``extract_version``, ``flag_bits``, ``volume``, ``internal_attr``, ``external_attr``,
    ``CRC``, ``header_offset``, ``compress_size``, ``compress_type``."""

    def __init__(self, filename: str, size: int, mode: int, last_modified: float | None,
                 info: MemberInfo, orig_filename: str | None = None) -> None:
        super().__init__(filename, size, mode, last_modified)
        self._info = info
        #: the member's name in the archive (a directory entry's ends with ``/``)
        self.orig_filename = filename if orig_filename is None else orig_filename

    @property
    def compressed_size(self) -> int:
        return self._info.compressed_size

    @property
    def crc32(self) -> int:
        return self._info.crc

    @property
    def compress_type(self) -> int:
        return self._info.method

    @property
    def header_offset(self) -> int:
        return self._info.header_offset

    @property
    def flag_bits(self) -> int:
        return self._info.flags

    compress_size = compressed_size
    CRC = crc32

    # comment, create_system, create_version, extract_version, volume, internal_attr,
    # external_attr: from the central directory record, shared by the members that agree
    comment: bytes
    create_system: int
    create_version: int
    extract_version: int
    volume: int
    internal_attr: int
    external_attr: int


def _provenance_field(name: str) -> property:
    return property(lambda st: getattr(st._info.provenance, name),
                    doc=f"``zipfile.ZipInfo.{name}`` of the member.")


for _name in Provenance._fields:
    setattr(ZipFileStat, _name, _provenance_field(_name))
del _name


class Zip(ArchiveFS):
    """The zip archive at ``file_path`` on ``backend``, as a filesystem.

    Args:
        backend: the filesystem holding the archive (any: local, S3, mem://, another
            archive...).
        file_path: the archive's path on ``backend``.
        mode: ``"r"`` to read an existing archive, ``"w"`` to write a new one (published
            by :meth:`close`; not at all if an exception leaves the ``with`` block).
        create: accepted for PFIO 2.x; it only makes sense with ``mode="w"``.
        whole_member_limit: members up to this size (bytes, uncompressed) are read whole
            into memory with one read; larger ones are streamed.
        stream_chunk_size: bytes read from the backing file at a time when streaming.
        compression: write mode: "deflated" (default), "stored", "bzip2" or "lzma"; a
            member may override it with ``open(name, "wb", compression_type=...)``.
        compresslevel: write mode: as for :class:`zipfile.ZipFile`.

    In write mode members are written one at a time: ``open(name, "wb"|"w"|"xb"|"x",
    size=None, compression_type=None)`` returns a writer; ``size`` (when known) lets small
    members skip zip64 fields. ``mkdir``/``makedirs`` write directory entries. Members
    written so far are visible to ``exists``/``stat``/``list``; reading them is not
    supported (``io.UnsupportedOperation``).

    Raises:
        ArchiveError: (read mode) the file is not a zip archive, or it is truncated or
            corrupt; the message names the archive.
        FileNotFoundError, IsADirectoryError: as ``backend.open`` raises them.
    """

    #: the request that opens the archive on S3 reads its last MiB: the end record and
    #: usually the whole central directory (about 15,000 members), so opening costs one
    backing_open_options = {"first_fetch": -(1 << 20)}

    # names are listed as PFIO 2.x's Zip listed them: directories without a trailing "/",
    # and recursively the archive's members only (as ``zipfile.ZipFile.namelist`` has them)
    list_marks_directories = False
    list_implied_directories = False

    # ``trace=True`` records the opening (PFIO 2.x's name for it) too
    _ppe_operations = {**ArchiveFS._ppe_operations, "_build_index": "create-zipfile-obj"}

    def __init__(self, backend: FS, file_path: str, mode: str = "r", create: bool = False,
                 *, whole_member_limit: int = 8 << 20, stream_chunk_size: int = 4 << 20,
                 compression: str | int = "deflated", compresslevel: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(backend, file_path, mode)
        if create and mode != "w":
            raise ValueError("create=True needs mode='w': a zip archive is created by "
                             "writing it")
        warn_unknown_options("Zip", kwargs)
        self.whole_member_limit = whole_member_limit
        self.stream_chunk_size = stream_chunk_size
        self._writer: ArchiveWriter | None = None
        if mode == "w":
            self._index = ArchiveIndex(self._label)
            method = compress_type(compression)  # checked before the stream is opened
            self._writer = ArchiveWriter(backend.open(file_path, "wb"), self._label, method,
                                         compresslevel, self._index)
            # an archive dropped (or left at exit) without close() is not published
            weakref.finalize(self, self._writer.discard_if_open)
        else:
            try:
                self._index = self._build_index()
            except BaseException:
                self._release()  # do not keep the backing file of an unreadable archive
                raise

    # -- reading ------------------------------------------------------------------------

    def _build_index(self) -> ArchiveIndex:
        index = ArchiveIndex(self._label)
        add = index.add
        for name, size, mtime, mode, info in read_central_directory(
                self._read_tail, self._read_at, self._label):
            add(name, name.endswith("/"), size=size, mtime=mtime, mode=mode, info=info)
        return index

    def open(self, path: str, mode: str = "r", buffering: int = -1,
             encoding: str | None = None, errors: str | None = None,
             newline: str | None = None, compression: str | None = None,
             **kwargs: Any) -> IO[Any]:
        """Open a member; see :meth:`pfio.fs.base.FS.open` (members are read-only in read
        mode, write-only in write mode)."""
        # fast path: a plain read of a name exactly as it is in the index
        if (mode == "rb" and encoding is None and errors is None and newline is None
                or mode == "r") and compression is None and not kwargs \
                and self._writer is None:
            entry = self._lookup(path)
            if entry is not None and not entry.is_dir:
                member = self._open_member(entry, buffering)
                return member if mode == "rb" else text_reader(member, encoding, errors,
                                                               newline)
        return super().open(path, mode, buffering, encoding, errors, newline, compression,
                            **kwargs)

    # -- names: a name as it is in the index is found without normalising it -------------

    def _lookup(self, path: str) -> Entry | None:
        entries = self.index.entries
        entry = entries.get(f"{self.root}/{path}" if self.root else path)
        return entry if entry is not None else entries.get(self._key(path))

    def _entry(self, path: str) -> Entry:
        entry = self._lookup(path)
        if entry is None:
            raise MemberNotFoundError(self._label, self._key(path))
        return entry

    def stat(self, path: str) -> FileStat:
        """The :class:`ZipFileStat` of a member, its ``filename`` the member's name in the
        archive (a directory entry's ends with ``/``, as :class:`zipfile.ZipInfo` has it); a
        directory that only members' names imply has a plain :class:`FileStat`.

        Raises:
            FileNotFoundError: nothing is at ``path`` (the error is also a ``KeyError``).
        """
        entry = self._entry(path)
        return self._stat(entry, _member_name(entry))

    def exists(self, path: str) -> bool:
        return self._lookup(path) is not None

    def isdir(self, path: str) -> bool:
        entry = self._lookup(path)
        return entry is not None and entry.is_dir

    def stored_members(self) -> list[str]:
        """The names of the archive's members (directories left out), in the order their
        data is stored in the archive: reading them in this order reads the archive front to
        back. Each name opens with :meth:`open` (in a view made by :meth:`subfs`, the members
        under its root, named from there)."""
        prefix = f"{self.root}/" if self.root else ""
        members = [(entry.info.header_offset, entry.name[len(prefix):])
                   for entry in self.index.entries.values()
                   if not entry.is_dir and entry.info is not None
                   and entry.name.startswith(prefix)]
        return [name for _, name in sorted(members)]

    def _open_member(self, entry: Entry, buffering: int) -> IO[bytes]:
        if self._closed:
            raise ValueError(f"I/O operation on a closed archive: {self._label}")
        info = entry.info
        if info.method != STORED and info.method != DEFLATED or info.flags & FLAG_ENCRYPTED:
            check_readable(info, self._label, entry.name)
        if entry.size <= self.whole_member_limit:
            return MemoryReader(read_member(self._read_at, info, entry.size, self._label,
                                            entry.name), entry.name)
        self._member_opened()
        try:
            raw = open_stream(self._read_at, info, entry.size, self._label, entry.name,
                              self.stream_chunk_size, self._member_closed)
        except BaseException:
            self._member_closed()
            raise
        if buffering == 0:
            return as_binary_io(raw)
        return io.BufferedReader(raw, buffering if buffering > 1 else io.DEFAULT_BUFFER_SIZE)

    def _explicit(self, entry: Entry) -> bool:
        return entry.info is not None

    def _stat(self, entry: Entry, filename: str) -> FileStat:
        if entry.info is None:  # a directory only implied by member names
            return FileStat(filename, entry.size, entry.mode, entry.mtime)
        return ZipFileStat(filename, entry.size, entry.mode, entry.mtime, entry.info,
                           _member_name(entry))

    # -- writing ------------------------------------------------------------------------

    def _open_writer(self, key: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        assert self._writer is not None  # ArchiveFS calls this only while writing
        return self._writer.open_member(key, mode, buffering, encoding, errors, newline,
                                        size=kwargs.pop("size", None),
                                        compression=kwargs.pop("compression_type", None))


def _member_name(entry: Entry) -> str:
    """The name of ``entry``'s member in the archive: a directory entry's ends with ``/``."""
    return entry.name + "/" if entry.is_dir and entry.info is not None else entry.name
