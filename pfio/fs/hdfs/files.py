"""File objects of the HDFS backend: a positional reader, an atomic writer, an appender.

* :class:`HdfsReader` is a buffered reader with ``read_at(offset, size)`` (one positional
  read that moves no file position: what zip and tar containers on HDFS use); plain reads
  are positional too, so ``seek`` costs nothing.
* :class:`HdfsAtomicSink` writes to a hidden temporary file beside the target and renames it
  over the target on close (without replacing anything for ``"x"`` modes); an exception
  inside the ``with`` block deletes the temporary file and publishes nothing.
* :class:`HdfsAppendSink` appends in place, as HDFS does: what was flushed before an
  exception stays in the file.
"""

from __future__ import annotations

import io
import logging
import posixpath
import time
from types import SimpleNamespace
from typing import Any

from ...trace import hook
from ..positional import seek_position
from ..writers import AtomicSink, temporary_name
from .client import mapped_errors

logger = logging.getLogger(__name__)

#: bytes per request of sequential reads and writes (HDFS requests are expensive)
IO_BUFFER_SIZE = 1 << 20


def write_options(overwrite: bool) -> Any:
    """``hdfs_native.WriteOptions`` for ``create`` (parents are created, as HDFS clients
    do); an object with the same attributes where hdfs-native is not installed."""
    try:
        from hdfs_native import WriteOptions
    except ImportError:
        return SimpleNamespace(overwrite=overwrite, create_parent=True, permission=None)
    options = WriteOptions()  # attributes, not keywords: older releases take none
    options.overwrite = overwrite
    options.create_parent = True
    return options


class _RawReader(io.RawIOBase):
    """Unbuffered reads of an open HDFS file through positional ``read_range`` calls."""

    def __init__(self, handle: Any, name: str) -> None:
        super().__init__()
        self._handle = handle
        self.name = name
        self.mode = "rb"
        self._size = handle.size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer at the end of the file)."""
        if self.closed:
            raise ValueError("read of a closed file")
        if offset < 0 or size < 0:
            raise ValueError("negative offset or size")
        size = min(size, self._size - offset)
        if size <= 0:
            return b""
        start = time.perf_counter() if hook.ENABLED else 0.0
        with mapped_errors(self.name):
            data: bytes = self._handle.read_range(offset, size)
        if hook.ENABLED:
            hook.record_request("hdfs", "READ", nbytes=len(data),
                                seconds=time.perf_counter() - start, url=self.name)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read_at(self._pos, len(buffer))
        buffer[:len(data)] = data
        self._pos += len(data)
        return len(data)

    def readall(self) -> bytes:
        data = self.read_at(self._pos, max(0, self._size - self._pos))
        self._pos += len(data)
        return data

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if self.closed:
            raise ValueError("seek of a closed file")
        self._pos = seek_position(offset, whence, self._pos, self._size, self.name)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        if not self.closed:
            try:
                self._handle.close()
            finally:
                super().close()


class HdfsReader(io.BufferedReader):
    """A buffered HDFS file opened for reading, with :meth:`read_at`."""

    raw: _RawReader

    def read_at(self, offset: int, size: int) -> bytes:
        """Read up to ``size`` bytes at ``offset`` without moving the file position."""
        return self.raw.read_at(offset, size)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


def open_reader(handle: Any, name: str, buffering: int = -1) -> HdfsReader:
    """Wrap an open client file handle (``hdfs_native.FileReader``) as :class:`HdfsReader`."""
    size = buffering if buffering > 1 else IO_BUFFER_SIZE
    return HdfsReader(_RawReader(handle, name), size)


class _HdfsSink(AtomicSink):
    """A sink whose bytes go to an HDFS writer (``self._writer``), errors mapped."""

    _writer: Any

    def _write(self, b: Any) -> int:
        with mapped_errors(self.name):
            self._writer.write(b)
        return len(b)


class HdfsAtomicSink(_HdfsSink):
    """Writes ``path`` through a temporary file renamed over it on close.

    Args:
        client: the client (``hdfs_native.Client`` or the like).
        path: the absolute HDFS path of the target.
        name: the target's URL, for errors.
        exclusive: fail on close if ``path`` appeared meanwhile, instead of replacing it.
    """

    def __init__(self, client: Any, path: str, name: str, exclusive: bool = False) -> None:
        super().__init__(name)
        self._client = client
        self._path = path
        directory, base = posixpath.split(path)
        self._tmp = posixpath.join(directory, temporary_name(base))
        self._exclusive = exclusive
        with mapped_errors(name):
            self._writer = client.create(self._tmp, write_options(overwrite=False))

    def _commit(self) -> None:
        with mapped_errors(self.name):
            self._writer.close()
            self._client.rename(self._tmp, self._path, overwrite=not self._exclusive)

    def _discard(self) -> None:
        try:
            self._writer.close()
        except Exception:  # the file is deleted anyway; the original error matters
            logger.debug("closing %s before deleting it failed", self._tmp, exc_info=True)
        try:
            self._client.delete(self._tmp, False)
        except Exception:
            logger.warning("could not delete the temporary file %s", self._tmp, exc_info=True)


class HdfsAppendSink(_HdfsSink):
    """Appends to ``path`` in place (created when missing). Aborting only drops what was
    not yet flushed: HDFS cannot take back appended bytes."""

    def __init__(self, client: Any, path: str, name: str, exists: bool) -> None:
        super().__init__(name)
        with mapped_errors(name):
            self._writer = (client.append(path) if exists
                            else client.create(path, write_options(overwrite=False)))

    def _commit(self) -> None:
        with mapped_errors(self.name):
            self._writer.close()

    def _discard(self) -> None:
        self._commit()
