"""Writing a new tar archive (or ``.tar.gz``) as one stream to any writable filesystem.

The archive is written by pfio's tar stream writer (:mod:`.tar_stream`: pax format, long
names need no special care; gzip at level 9 for ``.tar.gz``) onto the all-or-nothing writer
of the backing filesystem (``backend.open(path, "wb")``). A tar header carries the member's
size, so each member is spooled (in memory up to a limit, then in a temporary file) and
appended, header and data, when its writer is closed: several members may be open at once,
and the archive itself is never held in memory. The archive appears when it is closed; if
it is abandoned (an exception left the ``with`` block, appending a member failed) nothing
is published."""

from __future__ import annotations

import logging
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from ..errors import ArchiveError
from ..fs.modes import Mode
from ..fs.writers import AtomicSink, atomic_writer
from .tar_stream import TarStream

logger = logging.getLogger(__name__)

#: the gzip level of a ``.tar.gz`` archive (tarfile's, which wrote them before)
COMPRESSLEVEL = 9


class TarWriter:
    """The state of a tar archive open for writing.

    ``on_written(key, is_dir, size=, mtime=, mode=)`` is called for every member and
    directory once it is in the archive. ``pending`` holds the names of members whose
    writers are still open.
    """

    def __init__(self, stream: IO[bytes], archive: str, compress: bool,
                 on_written: Callable[..., Any], spool_limit: int = 8 << 20) -> None:
        self._stream = stream
        self._archive = archive
        self._tar = TarStream(stream, COMPRESSLEVEL if compress else None)
        self._on_written = on_written
        self.spool_limit = spool_limit
        self._lock = threading.Lock()
        self.pending: set[str] = set()
        self._failure: str | None = None
        self.closed = False

    def _check_open(self, key: str) -> None:
        if self.closed:
            raise ValueError(f"archive {self._archive} is closed; {key!r} was not written")
        if self._failure is not None:
            raise ArchiveError(f"{self._archive}: cannot write {key!r}: {self._failure}")

    def open_member(self, key: str, mode: Mode, buffering: int, encoding: str | None,
                    errors: str | None, newline: str | None) -> IO[Any]:
        """A writer of member ``key`` (binary or text as ``mode`` says); the member is
        appended to the archive when the writer is closed without an error."""
        self._check_open(key)
        self.pending.add(key)
        return atomic_writer(_MemberSink(self, key), mode, buffering, encoding, errors,
                             newline)

    def add_dir(self, key: str) -> None:
        """Append the entry of directory ``key``."""
        self._append(key, tarfile.DIRTYPE, 0o755, 0, None)

    def add_member(self, key: str, data: IO[bytes], size: int) -> None:
        """Append member ``key`` with ``size`` bytes of ``data`` (positioned at its start)."""
        self._append(key, tarfile.REGTYPE, 0o644, size, data)

    def _append(self, key: str, kind: bytes, mode: int, size: int,
                data: IO[bytes] | None) -> None:
        with self._lock:
            self._check_open(key)
            mtime = int(time.time())
            try:
                self._tar.add(key, size, data, mode, mtime, kind)
            except BaseException as exc:
                self._failure = f"appending {key!r} failed ({exc!r})"
                raise
            self._on_written(key, kind == tarfile.DIRTYPE, size=size, mtime=mtime, mode=mode)

    def close(self) -> None:
        """Finish the archive and publish it (nothing is published after a failure).

        Raises:
            ArchiveError: appending a member failed earlier; the archive was abandoned.
        """
        if self.closed:
            return
        if self.pending:
            logger.warning("%s: members still open for writing are left out: %s",
                           self._archive, ", ".join(sorted(self.pending)))
        if self._failure is not None:
            self.abandon()
            raise ArchiveError(f"{self._archive}: not published: {self._failure}")
        self.closed = True
        try:
            self._tar.finish()
        except BaseException:
            self._abort_stream()
            raise
        self._stream.close()

    def abandon(self) -> None:
        """Publish nothing: drop the archive written so far."""
        if self.closed:
            return
        self.closed = True
        self._abort_stream()

    def _abort_stream(self) -> None:
        self._tar.abandon()
        abort = getattr(self._stream, "abort", None)
        if abort is None:
            logger.warning("%s: the backing writer cannot be aborted; what was written may "
                           "be published", self._archive)
        else:
            abort()
        self._stream.close()


class _MemberSink(AtomicSink):
    """A member being written: spooled, then appended to the archive on close."""

    def __init__(self, writer: TarWriter, key: str) -> None:
        super().__init__(key)
        self._writer = writer
        self._spool = tempfile.SpooledTemporaryFile(max_size=writer.spool_limit)

    def _write(self, b: Any) -> int:
        return self._spool.write(b)

    def _commit(self) -> None:
        size = self._spool.tell()
        self._spool.seek(0)
        self._writer.add_member(self.name, self._spool, size)
        self._release()

    def _discard(self) -> None:
        self._release()

    def _release(self) -> None:
        self._spool.close()
        self._writer.pending.discard(self.name)
