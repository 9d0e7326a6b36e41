"""The files the TensorFlow plugin hands out: :class:`Reader` (TensorFlow's random-access
file) and :class:`Writer` (its writable file), each over a file object opened by pfio."""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Callable
from typing import IO, Any

logger = logging.getLogger(__name__)


class Reader:
    """A file TensorFlow reads at offsets, from any of its threads.

    TensorFlow reads most files front to back in blocks (TFRecord files, a checkpoint's
    data): those reads go to the file object pfio opened, which streams and reads ahead (on
    S3, parallel ranged GETs after the opening GET), seeking only when a read does not start
    where the last one ended. A read that comes while another thread is reading is a
    positional read of its own (one ranged GET on S3) where the file has them
    (``read_at``, see :mod:`pfio.fs.positional`), else it waits for its turn.
    """

    def __init__(self, f: IO[bytes]) -> None:
        self._file = f
        self._read_at: Callable[[int, int], bytes] | None = getattr(f, "read_at", None)
        self._lock = threading.Lock()
        self._position = 0

    def read_into(self, offset: int, buffer: memoryview) -> int:
        """Fill ``buffer`` from ``offset``; the number of bytes read (fewer only at the end
        of the file)."""
        if not self._lock.acquire(blocking=False):
            if self._read_at is not None:  # another thread is reading: a read of its own
                data = self._read_at(offset, len(buffer))
                buffer[:len(data)] = data
                return len(data)
            self._lock.acquire()
        try:
            if offset != self._position:
                self._file.seek(offset)
            got = 0
            while got < len(buffer):
                n = self._file.readinto(buffer[got:])
                if not n:
                    break
                got += n
            self._position = offset + got
            return got
        finally:
            self._lock.release()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


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
