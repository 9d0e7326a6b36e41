"""Writing a new zip archive as one stream to any writable filesystem.

The archive goes through :class:`zipfile.ZipFile` onto the all-or-nothing writer of the
backing filesystem (``backend.open(path, "wb")``), as a non-seekable stream: members carry
data descriptors, nothing is ever rewritten, and a member's bytes go straight out (nothing is
held per member). The archive appears when it is closed; if it is abandoned (an exception
left the ``with`` block, a member writer failed, it was never closed) nothing is published.

zip64: a member whose size is unknown when it is opened is written with zip64 local fields,
so that it may grow beyond 4 GiB (about 36 bytes more per member). Pass ``size=`` to
:meth:`Zip.open` when the size is known: then zip64 is used only where that size needs it.
"""

from __future__ import annotations

import logging
import stat as _stat
import time
import zipfile
from typing import IO, Any

from ..errors import ArchiveError
from ..fs.modes import Mode
from ..fs.writers import AtomicSink, atomic_writer
from .names import ArchiveIndex
from .zip_format import MemberInfo, Provenance

logger = logging.getLogger(__name__)

COMPRESS_TYPES = {
    "stored": zipfile.ZIP_STORED,
    "deflated": zipfile.ZIP_DEFLATED,
    "bzip2": zipfile.ZIP_BZIP2,
    "lzma": zipfile.ZIP_LZMA,
}

def compress_type(value: str | int) -> int:
    """The :mod:`zipfile` constant of ``value`` ("stored", "deflated", "bzip2", "lzma" or a
    :mod:`zipfile` constant).

    Raises:
        ValueError: an unknown compression.
    """
    if value in COMPRESS_TYPES.values():
        return int(value)
    try:
        return COMPRESS_TYPES[value]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"unknown zip compression {value!r}; use one of "
                         f"{', '.join(COMPRESS_TYPES)}") from None


class _Output:
    """The archive's stream as :mod:`zipfile` sees it: it counts what was written (``tell``)
    and cannot seek. After :meth:`drop` writes go nowhere."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream: IO[bytes] | None = stream
        self._written = 0

    def write(self, data: Any) -> int:
        if self._stream is None:
            return len(data)
        n = self._stream.write(data)
        if n is None:  # a raw stream that does not say: it took everything
            n = memoryview(data).nbytes
        self._written += n
        return n

    def tell(self) -> int:
        return self._written

    def flush(self) -> None:
        if self._stream is not None:
            self._stream.flush()

    def drop(self) -> None:
        self._stream = None


class ArchiveWriter:
    """The state of a zip archive open for writing: one member at a time.

    Every member and directory is added to ``index`` once it is complete.
    """

    def __init__(self, stream: IO[bytes], archive: str, compression: str | int,
                 compresslevel: int | None, index: ArchiveIndex) -> None:
        self._stream = stream
        self._archive = archive
        self._output = _Output(stream)
        self._zip = zipfile.ZipFile(self._output, "w", compress_type(compression),  # type: ignore[arg-type]
                                    allowZip64=True, compresslevel=compresslevel)
        self._index = index
        self._member: str | None = None
        self._handle: IO[bytes] | None = None
        self._failure: str | None = None
        self._abandoned = False
        self.closed = False

    def _check_writable(self, key: str) -> None:
        if self.closed:
            raise ValueError(f"archive {self._archive} is closed")
        if self._failure is not None:
            raise ArchiveError(f"{self._archive}: cannot write {key!r}: {self._failure}")
        if self._member is not None:
            raise ValueError(f"{self._archive}: member {self._member!r} is still open for "
                             f"writing; close it before writing {key!r} (one member at a time)")

    def open_member(self, key: str, mode: Mode, buffering: int, encoding: str | None,
                    errors: str | None, newline: str | None, size: int | None = None,
                    compression: str | int | None = None) -> IO[Any]:
        """A writer of member ``key`` (binary or text as ``mode`` says).

        ``size``: the member's size when known (picks zip64 only where needed);
        ``compression``: this member's compression instead of the archive's.
        """
        self._check_writable(key)
        zinfo = zipfile.ZipInfo(key, time.localtime()[:6])
        zinfo.compress_type = (self._zip.compression if compression is None
                               else compress_type(compression))
        zinfo.external_attr = (_stat.S_IFREG | 0o644) << 16
        if size is not None:
            zinfo.file_size = size
        handle = self._zip.open(zinfo, "w", force_zip64=size is None)
        self._member, self._handle = key, handle
        sink = _MemberSink(self, zinfo)
        return atomic_writer(sink, mode, buffering, encoding, errors, newline)

    def add_dir(self, key: str) -> None:
        """Write the entry of directory ``key``."""
        self._check_writable(key)
        zinfo = zipfile.ZipInfo(key + "/", time.localtime()[:6])
        zinfo.external_attr = (_stat.S_IFDIR | 0o755) << 16 | 0x10  # 0x10: MS-DOS directory
        self._zip.writestr(zinfo, b"", compress_type=zipfile.ZIP_STORED)
        self._written(key, True, zinfo)

    def _written(self, key: str, is_dir: bool, zinfo: zipfile.ZipInfo) -> None:
        provenance = Provenance(zinfo.create_version, zinfo.create_system,
                                zinfo.extract_version, zinfo.volume, zinfo.internal_attr,
                                zinfo.external_attr, zinfo.comment)
        info = MemberInfo(zinfo.header_offset, zinfo.compress_size, zinfo.compress_type,
                          zinfo.CRC, zinfo.flag_bits, len(zinfo.filename.encode()), provenance)
        self._index.add(key, is_dir, size=zinfo.file_size, info=info,
                        mtime=time.mktime(zinfo.date_time + (0, 0, -1)),
                        mode=zinfo.external_attr >> 16)

    def _write_member(self, data: Any) -> int:
        if self._handle is None:
            raise ValueError(f"{self._archive}: the member was ended (the archive was closed)")
        return self._handle.write(data)

    def _member_done(self, zinfo: zipfile.ZipInfo) -> None:
        self._end_member()
        self._written(zinfo.filename, False, zinfo)

    def _member_failed(self, zinfo: zipfile.ZipInfo) -> None:
        self._failure = f"writing member {zinfo.filename!r} failed"
        try:
            self._end_member()
        except Exception as exc:  # the archive is lost anyway; the first error is reported
            logger.debug("archive %s: ending failed member %r: %s", self._archive,
                         zinfo.filename, exc)

    def _end_member(self) -> None:
        handle, self._handle, self._member = self._handle, None, None
        if handle is not None:
            handle.close()

    def discard_if_open(self) -> None:
        """Discard the archive unless it was closed (called when its ``Zip`` is collected
        or the interpreter exits)."""
        if not self.closed:
            logger.warning("zip archive %s open for writing was never closed: not published",
                           self._archive)
            self.abandon()
            self.close()

    def abandon(self) -> None:
        """Publish nothing when the archive is closed."""
        self._abandoned = True

    def close(self) -> None:
        """Publish the archive (write the central directory, close the stream) or, when it
        was abandoned or a member failed, discard it.

        Raises:
            ValueError: a member is still open (the archive is discarded).
            ArchiveError: a member writer failed earlier (the archive is discarded).
        """
        if self.closed:
            return
        self.closed = True
        if self._abandoned:
            self._discard()
            return
        if self._member is not None:
            member = self._member
            self._discard()
            raise ValueError(f"{self._archive}: closed while member {member!r} was open "
                             "for writing; the archive was not written")
        if self._failure is not None:
            self._discard()
            raise ArchiveError(f"{self._archive} was not written: {self._failure}")
        try:
            self._zip.close()
        except BaseException:
            self._discard()
            raise
        self._stream.close()

    def _discard(self) -> None:
        self._output.drop()
        abort = getattr(self._stream, "abort", None)
        if abort is None:
            logger.warning("archive %s: its backing stream cannot be aborted; a partial "
                           "archive may be left behind", self._archive)
        else:
            abort()
        try:
            self._stream.close()
        finally:
            # end zipfile's state (writing into the dropped output), so that it has nothing
            # left to do when it is garbage collected
            try:
                self._end_member()
                self._zip.close()
            except (OSError, ValueError, RuntimeError) as exc:
                logger.debug("archive %s: closing the discarded zip: %s", self._archive, exc)


class _MemberSink(AtomicSink):
    """Raw writer of one member; committing completes it in the archive, discarding marks
    the archive failed (its bytes are already in the stream)."""

    def __init__(self, writer: ArchiveWriter, zinfo: zipfile.ZipInfo) -> None:
        super().__init__(zinfo.filename)
        self._writer = writer
        self._zinfo = zinfo

    def write(self, b: Any) -> int:
        return self._writer._write_member(b)

    def _commit(self) -> None:
        self._writer._member_done(self._zinfo)

    def _discard(self) -> None:
        self._writer._member_failed(self._zinfo)


