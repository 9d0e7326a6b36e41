"""``Tar``: a tar archive opened as a filesystem, over a file from any filesystem.

Uncompressed tar (random access): the headers are read once when the archive is opened,
in one pass that skips the members' data (see :mod:`pfio.containers.tar_index`, over the
one tar reader, :mod:`pfio.containers.tar_format`);
``exists``, ``stat`` and ``isdir`` are dictionary look-ups. A member up to
``whole_member_limit`` bytes costs one read of the backing file (one ranged GET on S3) and
is returned as an in-memory file; a larger one is streamed in chunks and is seekable.

Compressed tar (``.tar.gz``/``.tgz``, or any archive starting with the gzip magic bytes):
read-only and sequential by nature. Opening decompresses the whole archive once to build
the index (nothing is kept but the index) and checks the gzip trailer (CRC-32 and length),
so a corrupt archive fails to open; reading a member decompresses the archive from its start
up to the member (a read that ends near the end of the archive checks the trailer again), so
each member read costs O(archive size) and a backward seek in a streamed member starts again
from the archive's start. For random access, use an uncompressed tar (or a zip).

Writing (``mode="w"``): a new archive is streamed to ``backend.open(path, "wb")`` and
published when the archive is closed (see :mod:`pfio.containers.tar_writer`); a name ending
in ``.tar.gz`` or ``.tgz`` writes a gzip-compressed archive.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from typing import IO, Any

from ..errors import ArchiveError
from ..fs.base import FS, warn_unknown_options
from ..fs.file_types import as_binary_io
from ..fs.modes import Mode
from ..fs.writers import MemoryReader
from .base import ArchiveFS
from .names import ArchiveIndex, Entry
from .tar_index import Unreadable, scan
from .tar_io import RangeReader, ReadAt
from .tar_sources import (
    DECODE_ERRORS,
    GZIP_MAGIC,
    GZIP_SUFFIXES,
    decode_error,
    gunzipped,
    read_to_end,
)
from .tar_writer import TarWriter

logger = logging.getLogger(__name__)

__all__ = ["Tar", "ArchiveError"]

#: a compressed member read ending this close to the end of the archive's data reads on
#: to the end, so that the gzip trailer checks what was decompressed
VERIFY_TAIL = 64 << 10


class Tar(ArchiveFS):
    """The tar archive at ``file_path`` on ``backend``, as a filesystem.

    Args:
        backend: the filesystem holding the archive (any: local, S3, mem://, another
            archive...).
        file_path: the archive's path on ``backend``.
        mode: ``"r"`` to read an existing archive, ``"w"`` to write a new one (published
            by :meth:`close`; not at all if an exception leaves the ``with`` block).
        whole_member_limit: members up to this size (bytes) are read whole into memory
            with one read; larger ones are streamed.
        stream_chunk_size: the largest read of the backing file when streaming.
        spool_limit: write mode: a member being written is kept in memory up to this size,
            then in a temporary file, until its writer is closed.

    Members are read-only in read mode: ``open(name)`` in ``"rb"`` or ``"r"``. Hard links
    and symbolic links to members of the archive read as their target; a link to a name
    outside the archive raises ``FileNotFoundError`` when opened. Devices and fifos are
    not listed. Sparse members are listed, and opening one raises
    ``io.UnsupportedOperation``.

    In write mode ``open(name, "wb"|"w"|"xb"|"x")`` returns a writer and ``mkdir``/
    ``makedirs`` add directory entries. Members written so far are visible to
    ``exists``/``stat``/``list``; they cannot be read until the archive is reopened.

    Attributes:
        compressed: the archive is gzip-compressed (read: found by its magic bytes, so a
            ``.tar`` that is really gzipped reads too; write: a ``.tar.gz``/``.tgz`` name).

    Raises:
        ArchiveError: (read mode) the file is not a tar archive, or it is truncated or
            corrupt; the message names the archive.
        FileNotFoundError, IsADirectoryError: as ``backend.open`` raises them.
    """

    def __init__(self, backend: FS, file_path: str, mode: str = "r", *,
                 whole_member_limit: int = 8 << 20, stream_chunk_size: int = 4 << 20,
                 spool_limit: int = 8 << 20, **kwargs: Any) -> None:
        super().__init__(backend, file_path, mode)
        warn_unknown_options("Tar", kwargs)
        self.whole_member_limit = whole_member_limit
        self.stream_chunk_size = stream_chunk_size
        self.compressed = False
        self._data_size = 0  # compressed archives: the length of the decompressed data
        self._writer: TarWriter | None = None
        if mode == "w":
            self.compressed = file_path.endswith(GZIP_SUFFIXES)
            self._index = ArchiveIndex(self._label)
            stream = backend.open(file_path, "wb")
            self._writer = TarWriter(stream, self._label, self.compressed, self._index.add,
                                     spool_limit)
        else:
            self._index = self._build_index()

    # -- reading ------------------------------------------------------------------------

    def _build_index(self) -> ArchiveIndex:
        scanner = RangeReader(self._read_at, archive=self._label,
                              max_chunk=self.stream_chunk_size)
        with scanner:
            self.compressed = scanner.read(2) == GZIP_MAGIC
            scanner.seek(0)
            if not self.compressed:
                return scan(as_binary_io(scanner), self._label)
            with gunzipped(as_binary_io(scanner), self._label) as stream:
                index = scan(stream, self._label)
                self._data_size = read_to_end(stream, self._label)
                return index

    def _open_member(self, entry: Entry, buffering: int) -> IO[bytes]:
        info = entry.info
        if isinstance(info, Unreadable):
            raise info.error(f"{self._label}: member {entry.name!r} {info.reason}")
        if self.compressed:
            return self._open_compressed(entry.name, info, entry.size, buffering)
        return self._open_range(self._read_at, entry.name, info, entry.size, buffering)

    def _open_range(self, read_at: ReadAt, name: str, offset: int, size: int,
                    buffering: int, on_close: Callable[[], None] | None = None
                    ) -> IO[bytes]:
        """A member whose ``size`` bytes of data start at ``offset`` of the tar stream that
        ``read_at`` reads."""
        if size <= self.whole_member_limit:
            try:
                data = read_at(offset, size)
            finally:
                if on_close is not None:
                    on_close()
            if len(data) != size:
                raise ArchiveError(f"{self._label}: member {name!r} is cut short "
                                   f"({len(data)} of {size} bytes): truncated archive")
            return MemoryReader(data, name)
        self._member_opened()

        def closed() -> None:
            if on_close is not None:
                on_close()
            self._member_closed()

        raw = RangeReader(read_at, offset, size, archive=self._label, name=name,
                          min_chunk=64 << 10, max_chunk=self.stream_chunk_size,
                          on_close=closed)
        if buffering == 0:
            return as_binary_io(raw)
        return io.BufferedReader(raw, buffering if buffering > 1 else io.DEFAULT_BUFFER_SIZE)

    def _open_compressed(self, name: str, offset: int, size: int, buffering: int
                         ) -> IO[bytes]:
        """A member of a compressed archive: decompressed from the archive's start."""
        scanner = RangeReader(self._read_at, archive=self._label,
                              max_chunk=self.stream_chunk_size)
        stream = gunzipped(as_binary_io(scanner), self._label)
        end = offset + size
        verify = self._data_size - end <= VERIFY_TAIL

        def read_at(at: int, n: int) -> bytes:
            try:
                stream.seek(at)
                data = stream.read(n)
            except DECODE_ERRORS as exc:
                raise decode_error(self._label, exc) from exc
            if verify and at + len(data) == end:
                read_to_end(stream, self._label)
            return data

        def close() -> None:
            stream.close()
            scanner.close()

        return self._open_range(read_at, name, offset, size, buffering, close)

    # -- writing ------------------------------------------------------------------------

    def _open_writer(self, key: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        writer = self._writer
        assert writer is not None  # members are written only to an archive opened to write
        if key in writer.pending:
            raise FileExistsError(f"{self._label}: member {key!r} is being written already")
        return writer.open_member(key, mode, buffering, encoding, errors, newline)

    def __del__(self) -> None:
        writer = self.__dict__.get("_writer")
        if writer is not None and not writer.closed:
            logger.warning("tar archive %s open for writing was never closed: not published",
                           self.file_path)
            writer.abandon()
