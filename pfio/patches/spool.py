"""Files that a patched ``open`` writes to a URL: a local file first, published on close.

Code written for local disk expects a file it writes to have a file descriptor
(``os.fsync(f.fileno())`` after a flush, as TensorBoard's event writers do) and, in the
update modes (``"r+"``, ``"w+"``, ``"x+"``), to read back and seek (``zipfile``'s ``"a"``
mode opens ``"r+b"``). So ``open(url, "w")`` writes a local temporary file, uploaded to
``url`` when the file is closed cleanly and dropped when a ``with`` block leaves by an
exception (or the file is garbage-collected unclosed): the object appears whole or not at
all, as with every pfio writer.

Large files are not kept on local disk: a file opened for writing only (``"w"``, ``"x"``)
moves to pfio's streaming upload once it holds :data:`SPOOL_LIMIT` bytes, unless it was
kept local before by ``fileno()``, ``seek`` or ``truncate`` (then it stays local to the
end; asked after the move they raise ``io.UnsupportedOperation``). Update modes stay local,
since they read and seek anywhere. ``"r+"`` starts from a copy of the object. The pfio
writer of the URL is opened with the file, so that what pfio cannot write (a member of an
archive, ``"x"`` of an existing object) fails at ``open``.

Appending (``"a"``) is left to the filesystem, which refuses it where objects cannot grow
(S3): an append would rewrite the whole object on every close, and appenders in two
processes would lose each other's lines. The error says what to do instead.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from typing import IO, TYPE_CHECKING, Any

from ..api import open_url
from ..fs.file_types import as_binary_io
from ..fs.modes import Mode
from ..fs.writers import AtomicTextWriter, _unclosed, _warn_dropped, discard
from .targets import note_written, suffix

if TYPE_CHECKING:
    _BufferedLayer = io.BufferedWriter  # what _AllOrNothing is mixed into
else:
    _BufferedLayer = object

#: bytes a file opened for writing only keeps on local disk before it streams (64 MiB)
SPOOL_LIMIT = 64 << 20

#: how to do without appending, said when a filesystem refuses mode ``"a"``
APPEND_WORKAROUND = (
    "objects on this filesystem cannot be appended to; write the whole file anew, or open "
    "it with 'r+' and seek to its end (pfio spools a copy and rewrites the object on close)")


class SpooledUpload(io.RawIOBase):
    """The raw file under what :func:`open_spooled` returns: a local temporary file whose
    bytes go to ``url``'s pfio writer (opened at once, so that a name pfio cannot write
    fails here) on :meth:`close`, or stream to it once the file holds ``stream_after``
    bytes (None: never), unless the file was pinned local before: by ``fileno()``, a
    ``seek`` or a ``truncate``."""

    def __init__(self, url: str, mode: Mode, stream_after: int | None) -> None:
        super().__init__()
        self.name = url
        self._mode = mode
        self._stream_after = stream_after
        self._streaming = False
        self._aborted = False
        self._pinned = mode.plus
        handle, self._path = tempfile.mkstemp(prefix="pfio-spool-", suffix=suffix(url))
        self._file = io.FileIO(handle, "r+b")
        try:
            if mode.kind == "r":
                with open_url(url, "rb") as src:
                    shutil.copyfileobj(src, self._file, 1 << 20)
                self._file.seek(0)
            self._sink = open_url(url, "xb" if mode.kind == "x" else "wb")
        except BaseException:
            self._drop_local()
            io.RawIOBase.close(self)  # nothing to publish or discard
            raise

    def readable(self) -> bool:
        return self._mode.plus

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if not self._mode.plus:
            raise io.UnsupportedOperation(f"{self.name!r} is open for writing only")
        n = self._file.readinto(b)
        assert n is not None  # a FileIO of a regular file does not block
        return n

    def write(self, b: Any) -> int:
        if self._streaming:
            return self._sink.write(b)
        written = self._file.write(b)
        if self._stream_after is not None and not self._pinned \
                and self._file.tell() >= self._stream_after:
            self._start_streaming()
        return written

    def tell(self) -> int:
        return self._sink.tell() if self._streaming else self._file.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if (whence, offset) == (os.SEEK_CUR, 0):
            return self.tell()
        self._local("seek")
        return self._file.seek(offset, whence)

    def truncate(self, size: int | None = None) -> int:
        self._local("truncate")
        return self._file.truncate(size)

    def fileno(self) -> int:
        """The descriptor of the local file; from now on the file stays local to the end."""
        self._local("fileno")
        return self._file.fileno()

    def _local(self, what: str) -> None:
        """Keep the file local to the end (refused once it streams)."""
        if self._streaming:
            raise io.UnsupportedOperation(
                f"{what}() of {self.name!r}: it is being uploaded as it is written (it "
                f"outgrew the local spool of {SPOOL_LIMIT >> 20} MiB); call {what}() before "
                "writing that much to keep it local")
        self._pinned = True

    def _start_streaming(self) -> None:
        self._file.seek(0)
        shutil.copyfileobj(self._file, self._sink, 1 << 20)
        self._streaming = True
        self._drop_local()

    def abort(self) -> None:
        """Publish nothing when this file is closed."""
        self._aborted = True
        discard(self._sink)

    def close(self) -> None:
        if self.closed:
            return
        try:
            if not self._streaming and not self._aborted:
                try:
                    self._file.seek(0)
                    shutil.copyfileobj(self._file, self._sink, 1 << 20)
                except BaseException:
                    self.abort()
                    raise
            self._sink.close()
            if not self._aborted:
                note_written(self.name)
        finally:
            self._drop_local()
            super().close()

    def _drop_local(self) -> None:
        self._file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._path)

    def __del__(self) -> None:
        if not self.closed:
            _warn_dropped(self, self.name)
            self.abort()
        super().__del__()


class _AllOrNothing(_BufferedLayer):
    """The buffered layer's part: leaving a ``with`` block by an exception, or a failed
    flush, publishes nothing."""

    raw: SpooledUpload

    def abort(self) -> None:
        """Publish nothing when this file is closed."""
        self.raw.abort()

    def close(self) -> None:
        if self.closed:
            return
        try:
            self.flush()
        except BaseException:
            self.raw.abort()
            with contextlib.suppress(Exception):
                super().close()
            raise
        super().close()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.raw.abort()
        self.close()

    def __del__(self) -> None:
        if _unclosed(self):  # dropped unclosed: discarded, as pfio's writers are
            _warn_dropped(self, self.raw.name)
            self.raw.abort()
        super().__del__()


# (typeshed's buffered classes inherit __enter__s that disagree: IOBase's and BinaryIO's)
class _SpooledWriter(_AllOrNothing, io.BufferedWriter):  # type: ignore[misc]
    pass


class _SpooledRandom(_AllOrNothing, io.BufferedRandom):  # type: ignore[misc]  # (the same)
    pass


def open_spooled(url: str, mode: Mode, buffering: int = -1, encoding: str | None = None,
                 errors: str | None = None, newline: str | None = None) -> IO[Any]:
    """``url`` opened for writing (``mode.writing``, not appending) as described above, in
    binary or text mode as ``mode`` says."""
    if buffering == 0 and not mode.binary:
        raise ValueError("can't have unbuffered text I/O")
    raw = SpooledUpload(url, mode, SPOOL_LIMIT)
    if buffering == 0:
        return as_binary_io(raw)
    size = buffering if buffering > 1 else io.DEFAULT_BUFFER_SIZE
    buffered = (_SpooledRandom if mode.plus else _SpooledWriter)(raw, size)
    if mode.binary:
        return buffered
    return AtomicTextWriter(buffered, encoding, errors, newline,
                            line_buffering=buffering == 1)
