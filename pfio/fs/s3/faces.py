"""The file objects ``S3.open(path, "rb")`` returns: two faces of one :class:`S3Reader`.

PFIO 2.x code tells S3 files apart by class: ``open(..., buffering=0)`` gave a raw file
(``io.RawIOBase``) and the default an ``io.BufferedReader`` whose ``raw`` is that raw file.
pfio keeps those classes without a second reader and without a second buffer:

* :class:`S3RawReader` (``buffering=0``) is an ``io.RawIOBase`` over the reader;
* :class:`S3BufferedReader` (the default) is an ``io.BufferedReader`` whose ``raw`` is an
  :class:`S3RawReader` over the same reader. Every method is the reader's own (its
  read-ahead is the buffer): ``io.BufferedReader``'s C buffer and lock are never used, so
  the file keeps what :class:`S3Reader` promises (exact bytes or an error, one pinned
  version of the object, reads that may come from several threads, a child process that
  reads on after ``fork`` even while a parent's thread was reading) and its speed. The
  file and its ``raw`` share one position.

Both offer the reader's positional reads (``read_at``, ``readinto_at``, ``read_tail``) and
``size``, and pickle as the reader does (reopened at their position).
"""

from __future__ import annotations

import io
from typing import Any

from .reader import S3Reader


class _ReaderFace:
    """What both faces pass to their :class:`S3Reader` unchanged."""

    _reader: S3Reader
    mode = "rb"

    @property
    def reader(self) -> S3Reader:
        """The :class:`S3Reader` this file reads through."""
        return self._reader

    @property
    def size(self) -> int:
        """The object's size in bytes."""
        return self._reader.size

    @property
    def etag(self) -> str | None:
        """The ETag of the version this file reads, unquoted."""
        return self._reader.etag

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        return self._reader.read(size)

    def read1(self, size: int = -1) -> bytes:
        return self._reader.read1(size)

    def readinto(self, b: Any) -> int:
        return self._reader.readinto(b)

    def readinto1(self, b: Any) -> int:
        return self._reader.readinto1(b)

    def readline(self, size: int | None = -1) -> bytes:
        return self._reader.readline(size)

    def peek(self, size: int = 0) -> bytes:
        return self._reader.peek(size)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._reader.seek(offset, whence)

    def tell(self) -> int:
        return self._reader.tell()

    def read_at(self, offset: int, size: int) -> bytes:
        """See :meth:`S3Reader.read_at` (the position is left alone)."""
        return self._reader.read_at(offset, size)

    def readinto_at(self, offset: int, buffer: Any) -> int:
        """See :meth:`S3Reader.readinto_at` (the position is left alone)."""
        return self._reader.readinto_at(offset, buffer)

    def read_tail(self, size: int) -> tuple[int, bytes]:
        """See :meth:`S3Reader.read_tail` (the position is left alone)."""
        return self._reader.read_tail(size)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self._reader.name!r} size={self._reader.size}>"


class S3RawReader(_ReaderFace, io.RawIOBase):
    """The raw face of ``reader`` (what PFIO 2.x's ``buffering=0`` gave): ``read`` returns
    every byte asked for up to the end of the object, as the reader does."""

    def __init__(self, reader: S3Reader) -> None:
        super().__init__()
        self._reader = reader
        self.name = reader.name

    def readall(self) -> bytes:
        return self._reader.read(-1)

    def close(self) -> None:
        self._reader.close()
        super().close()

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self._reader,)


# (typeshed's io.BufferedReader inherits two __enter__ that disagree: IOBase's and BinaryIO's)
class S3BufferedReader(_ReaderFace, io.BufferedReader):  # type: ignore[misc]
    """The default face of ``raw``'s reader: an ``io.BufferedReader`` (PFIO 2.x's class)
    whose methods are the reader's (see the module documentation)."""

    raw: S3RawReader

    def __init__(self, raw: S3RawReader) -> None:
        super().__init__(raw, 1)  # (a one-byte C buffer, never used)
        self._reader = raw.reader

    def close(self) -> None:
        self.raw.close()  # ``closed`` is the raw file's

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.raw,)


def reader_face(reader: S3Reader, buffering: int) -> S3RawReader | S3BufferedReader:
    """``reader`` as PFIO 2.x's ``buffering`` asks: raw for 0, else buffered."""
    raw = S3RawReader(reader)
    return raw if buffering == 0 else S3BufferedReader(raw)


__all__ = ["S3BufferedReader", "S3RawReader", "reader_face"]
