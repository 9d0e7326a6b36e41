"""The files the TensorFlow plugin hands out: :class:`Reader` (TensorFlow's random-access
file) and :class:`Writer` (its writable file), each over a file object opened by pfio."""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import IO, Any

from ....fs.file_types import read_into

logger = logging.getLogger(__name__)


#: the least and the most a read-ahead fetches at once (as much as TensorFlow's last read,
#: within these bounds): TensorFlow reads a TFRecord file in blocks of ``buffer_size``
AHEAD_MIN = 1 << 20
AHEAD_MAX = 16 << 20
#: bytes of read-ahead buffers kept for the next files (a fresh buffer costs a page fault
#: per 4 KiB as it is filled: as much CPU as a quarter of reading it from loopback)
KEPT_BYTES = 64 << 20

_kept: list[bytearray] = []
_kept_lock = threading.Lock()
#: the plugin's files open for reading in this process
_open_readers = 0


def _new_buffer(size: int) -> bytearray:
    """A buffer of ``size`` bytes: one a closed file gave back, else a fresh one."""
    with _kept_lock:
        for i, kept in enumerate(_kept):
            if len(kept) == size:
                return _kept.pop(i)
    return bytearray(size)


def _give_back(buffers: list[bytearray | None]) -> None:
    """Keep ``buffers`` for later files, up to :data:`KEPT_BYTES` in all."""
    with _kept_lock:
        for buffer in buffers:
            if buffer and all(buffer is not k for k in _kept) and \
                    sum(map(len, _kept)) + len(buffer) <= KEPT_BYTES:
                _kept.append(buffer)


class Reader:
    """A file TensorFlow reads at offsets, from any of its threads.

    TensorFlow reads most files front to back in blocks (a TFRecord file ``buffer_size`` at
    a time, a checkpoint's data) and works on each block before it asks for the next: a
    ``TFRecordDataset`` parses the records of one block, then reads on. So that the file
    is read while TensorFlow works, a read that goes on from where the last one ended
    (the first read at offset 0 included) starts a *read-ahead*: the next block (as large
    as that read, :data:`AHEAD_MIN` to :data:`AHEAD_MAX` bytes) is read on pfio's fetch
    threads (:func:`pfio.integrations.dataset_io.fetch_pool`), and when TensorFlow asks for
    it, it is copied into TensorFlow's buffer and the block after it is started. So at most
    two blocks are held per file. Only a file read alone is read ahead: while TensorFlow
    reads several files at once (``num_parallel_reads``), its threads read one file while
    others parse, and read-ahead costs more CPU than it saves (measured: 9% fewer records/s
    over 8 files read 4 at a time). A read-ahead that has not started when its bytes are
    wanted (the threads are busy) is cancelled and the read done in the caller's thread,
    so a read never waits on a queue.

    Reads go to the file object pfio opened, which streams (on S3, reads on from the body
    of the opening GET, then parallel ranged GETs), seeking only when a read does not
    start where the file is. A read elsewhere while a read-ahead is in flight, or while
    another thread is reading, is a positional read of its own (one ranged GET on S3) where
    the file has them (``read_at``, see :mod:`pfio.fs.positional`), else it waits for its
    turn. A read-ahead that fails raises its error (naming the URL) from the read that
    wanted its bytes; one that nobody asks for is dropped with its error.
    """

    def __init__(self, f: IO[bytes]) -> None:
        global _open_readers
        self._file = f
        with _kept_lock:
            _open_readers += 1
        self._read_at: Callable[[int, int], bytes] | None = getattr(f, "read_at", None)
        self._lock = threading.Lock()
        self._position: int | None = 0  # the file object's (None: unknown, after an error)
        self._end = 0  # where the last read ended: a read from there is sequential
        # bytes read ahead and not yet handed out: _held at offset _held_at, in _held_buffer
        self._held = memoryview(b"")
        self._held_at = 0
        self._held_buffer: bytearray | None = None
        self._spare: bytearray | None = None  # a buffer free for the next read-ahead
        # the read-ahead in flight: its byte count, from _ahead_at into _ahead_buffer
        self._ahead: Future[int] | None = None
        self._ahead_at = 0
        self._ahead_buffer = bytearray()

    def read_into(self, offset: int, buffer: memoryview) -> int:
        """Fill ``buffer`` from ``offset``; the number of bytes read (fewer only at the end
        of the file)."""
        if not self._lock.acquire(blocking=False):
            if self._read_at is not None:  # another thread is reading: a read of its own
                return self._positional(offset, buffer)
            self._lock.acquire()
        try:
            sequential = offset == self._end
            got = self._serve(offset, buffer, sequential)
            self._end = offset + got
            if sequential and got == len(buffer) and self._ahead is None and \
                    _open_readers == 1:
                start = self._end
                if self._held_at <= start < self._held_at + len(self._held):
                    start = self._held_at + len(self._held)
                self._read_ahead(start, min(max(len(buffer), AHEAD_MIN), AHEAD_MAX))
            return got
        finally:
            self._lock.release()

    def close(self) -> None:
        """Close the file (after the read-ahead in flight, if any, has ended)."""
        global _open_readers
        with self._lock:
            if self._file.closed:
                return
            with _kept_lock:
                _open_readers -= 1
            self._drop()
            buffers = [self._held_buffer, self._ahead_buffer, self._spare]
            self._held_buffer = self._spare = None
            self._ahead_buffer = bytearray()
            _give_back(buffers)
            self._file.close()

    def _serve(self, offset: int, buffer: memoryview, sequential: bool) -> int:
        """Fill ``buffer`` from ``offset``: from the bytes read ahead, the read-ahead in
        flight, then the file (a read elsewhere that is not ``sequential`` leaves the
        read-ahead alone where the file has positional reads)."""
        got = 0
        while got < len(buffer):
            at = offset + got
            start = at - self._held_at
            if 0 <= start < len(self._held):
                n = min(len(buffer) - got, len(self._held) - start)
                buffer[got:got + n] = self._held[start:start + n]
                got += n
                continue
            if self._ahead is not None:
                if at == self._ahead_at:
                    if self._land():
                        if not self._held:  # read ahead at the end of the file
                            break
                        continue
                elif self._read_at is not None and not sequential:  # the read-ahead stays
                    return got + self._positional(at, buffer[got:])
                else:
                    self._drop()
            return got + self._direct(at, buffer[got:])
        return got

    def _read_ahead(self, start: int, size: int) -> None:
        """Read ``size`` bytes at ``start`` on a fetch thread."""
        from ...dataset_io import fetch_pool

        spare, self._spare = self._spare, None
        if spare is None or len(spare) != size:
            spare = _new_buffer(size)
        try:
            self._ahead = fetch_pool().submit(self._fill, start, memoryview(spare))
        except RuntimeError:  # the interpreter is exiting: reads go on without read-ahead
            return
        self._ahead_at, self._ahead_buffer = start, spare

    def _land(self) -> bool:
        """Make the read-ahead in flight the bytes held (waiting for it) and start the next
        one; False when it had not started (it is cancelled: the caller reads)."""
        ahead, self._ahead = self._ahead, None
        assert ahead is not None
        if ahead.cancel():
            return False
        try:
            n = ahead.result()
        except BaseException:
            self._position = None
            raise
        self._position = self._ahead_at + n
        buffer, self._ahead_buffer = self._ahead_buffer, bytearray()
        # the bytes held before were all handed out (or skipped): their buffer is free
        self._spare, self._held_buffer = self._held_buffer, buffer
        self._held = memoryview(buffer)[:n]
        self._held_at = self._ahead_at
        if n == len(buffer) and _open_readers == 1:
            self._read_ahead(self._ahead_at + n, n)
        return True

    def _drop(self) -> None:
        """Forget the bytes held and the read-ahead in flight (once it has ended: it moves
        the file's position)."""
        ahead, self._ahead = self._ahead, None
        self._held = memoryview(b"")
        if ahead is None or ahead.cancel():
            return
        try:
            self._position = self._ahead_at + ahead.result()
        except Exception as exc:  # nobody asked for these bytes: nor for their error
            logger.debug("a read-ahead nobody needed failed: %s", exc)
            self._position = None

    def _direct(self, offset: int, buffer: memoryview) -> int:
        """Read into ``buffer`` from ``offset`` of the file, in this thread."""
        try:
            got = self._fill(offset, buffer)
        except BaseException:
            self._position = None
            raise
        self._position = offset + got
        return got

    def _fill(self, offset: int, buffer: memoryview) -> int:
        """Read the file into ``buffer`` from ``offset`` (in the thread that holds the
        file: the caller's, or the read-ahead's)."""
        if offset != self._position:
            self._file.seek(offset)
        got = 0
        while got < len(buffer):
            n = read_into(self._file, buffer[got:])
            if not n:
                break
            got += n
        return got

    def _positional(self, offset: int, buffer: memoryview) -> int:
        assert self._read_at is not None
        data = self._read_at(offset, len(buffer))
        buffer[:len(data)] = data
        return len(data)


class Writer:
    """A file TensorFlow writes: what is written is published under its name when the
    file is closed, whole (pfio's atomic writers); nothing before.

    A write that fails makes the file unpublishable: closing it then discards what was
    written and raises. A file TensorFlow drops without closing it (a ``GFile`` garbage
    collected unclosed) is discarded as well.
    """

    def __init__(self, f: IO[bytes], name: str,
                 on_publish: Callable[[], Any] | None = None) -> None:
        self._file = f
        self._name = name
        self._on_publish = on_publish
        self._failed = False

    def write(self, data: bytes) -> None:
        """Append ``data``.

        Raises:
            OSError: an earlier write failed.
        """
        if self._failed:
            raise OSError(errno.EIO, "an earlier write failed: this file will not be published",
                          self._name)
        try:
            self._file.write(data)
        except BaseException:
            self._failed = True
            raise

    def tell(self) -> int:
        """The number of bytes written so far."""
        return self._file.tell()

    def close(self) -> None:
        """Publish the file (once).

        Raises:
            OSError: an earlier write failed, so nothing was published.
        """
        if self._file.closed:
            return
        if self._failed:
            self._abort()
            raise OSError(errno.EIO, "a write failed: nothing was published", self._name)
        self._file.close()
        if self._on_publish is not None:
            self._on_publish()

    def discard(self) -> None:
        """Close the file publishing nothing (TensorFlow dropped it unclosed)."""
        if not self._file.closed:
            logger.warning("%s was not closed: discarding what was written to it", self._name)
            self._abort()

    def _abort(self) -> None:
        abort = getattr(self._file, "abort", None)
        if abort is None:  # a file pfio did not make: nothing to discard it with
            logger.error("%s cannot be discarded; left unclosed", self._name)
            return
        abort()
        try:
            self._file.close()
        except Exception as exc:  # discarding: what was written is gone either way
            logger.warning("%s: discarding failed: %s", self._name, exc)
