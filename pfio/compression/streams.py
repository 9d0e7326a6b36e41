"""The file objects behind compressed ``open``: a seekable decompressing reader and a
compressing sink that publishes atomically."""

from __future__ import annotations

import errno
import io
import logging
from collections.abc import Callable
from typing import IO, Any

from ..fs.skipping import SKIP_CHUNK, drop
from ..fs.writers import AtomicSink
from .codecs import Codec, describe, is_decode_error

logger = logging.getLogger(__name__)

#: compressed bytes fetched from the underlying file at a time (decoders ask for small pieces)
RAW_BUFFER = 1024 * 1024


class DecodeError(OSError):
    """Bad or truncated compressed data: ``errno.EIO``, ``filename`` the file's name.

    ``reason`` is ``"truncated"`` or ``"corrupt"``, ``detail`` what the decoder said (with
    what it means, for zlib's terse trailer checks), for callers that say it in their own
    words (an archive's :class:`~pfio.errors.ArchiveError`).
    """

    reason = "corrupt"
    detail = ""


#: what zlib's complaints about a gzip or zlib trailer mean
_TRAILER_CHECKS = {
    "incorrect data check": "the checksum (CRC-32 or Adler-32) of the data does not match",
    "incorrect length check": "the length of the data does not match the trailer",
}


def decode_error(codec: str, name: str, exc: BaseException) -> DecodeError:
    """The :class:`DecodeError` reporting that ``exc`` (raised by the reader of the codec
    named ``codec``) found bad compressed data in the file ``name``."""
    reason = describe(exc)
    detail = str(exc)
    meaning = next((m for check, m in _TRAILER_CHECKS.items() if check in detail), None)
    if meaning is not None:
        detail = f"{detail}: {meaning}"
    error = DecodeError(errno.EIO, f"{reason} {codec} stream ({detail})", name)
    error.reason, error.detail = reason, detail
    return error


class DecompressingReader(io.RawIOBase):
    """The decompressed bytes of a compressed file, as a seekable raw stream.

    ``raw`` is the compressed file, open in binary mode; ``open_raw`` opens it again (None:
    it cannot be). Seeking forward decompresses and
    discards up to the target; seeking backward starts over from the beginning of the
    compressed file (rewinding it when it is seekable, opening it again otherwise), which
    costs a decompression of everything before the target. Seeking from the end
    decompresses the whole file first. A target past the end leaves the position at the end.

    Bad or truncated data raises :class:`DecodeError` (an ``OSError`` with ``errno.EIO``
    and ``filename`` = ``name``).
    """

    mode = "rb"

    def __init__(self, raw: IO[bytes], codec: Codec, name: str,
                 open_raw: Callable[[], IO[bytes]] | None = None) -> None:
        super().__init__()
        self.name = name
        self._codec = codec
        self._open_raw = open_raw
        self._raw = _buffered(raw)
        self._stream = codec.reader(self._raw)
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        self._check_open()
        return self._position

    def readinto(self, buffer: Any) -> int:
        self._check_open()
        try:
            count = self._stream.readinto(buffer)
        except Exception as exc:
            if is_decode_error(self._codec, exc):
                raise decode_error(self._codec.name, self.name, exc) from exc
            raise
        self._position += count
        return count

    def readall(self) -> bytes:
        chunks = []
        while chunk := self.read(SKIP_CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._check_open()
        if whence == io.SEEK_SET:
            target = offset
        elif whence == io.SEEK_CUR:
            target = self._position + offset
        elif whence == io.SEEK_END:
            drop(self)
            target = self._position + offset
        else:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if target < 0:
            raise ValueError(f"negative seek position {target}")
        if target < self._position:
            self._restart()
        drop(self, target - self._position)
        return self._position

    def _restart(self) -> None:
        rewind = self._raw.seekable()
        if not rewind and self._open_raw is None:
            raise io.UnsupportedOperation(f"{self.name}: cannot seek backward in a stream "
                                          "that can neither rewind nor be opened again")
        logger.debug("seeking backward in %s: decompressing again from the start", self.name)
        self._stream.close()
        if rewind:
            self._raw.seek(0)
        else:
            assert self._open_raw is not None
            self._raw.close()
            self._raw = _buffered(self._open_raw())
        self._stream = self._codec.reader(self._raw)
        self._position = 0

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed file")

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._stream.close()
        finally:
            self._raw.close()
            super().close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._codec.name} name={self.name!r}>"


def _buffered(raw: IO[bytes]) -> IO[bytes]:
    """``raw`` behind a large read buffer, so that a decoder's small reads stay cheap."""
    # typeshed wants a RawIOBase; BufferedReader needs only readinto, which any binary file has
    return io.BufferedReader(raw, RAW_BUFFER)  # type: ignore[arg-type]


class CompressingSink(AtomicSink):
    """Compresses what is written into ``raw`` (a binary writer of the target file).

    Closing it ends the compressed stream and closes ``raw``, which publishes the file;
    aborting it aborts ``raw`` (when ``raw`` can abort), so nothing is published.
    """

    def __init__(self, raw: IO[bytes], codec: Codec, name: str, level: int | None) -> None:
        super().__init__(name)
        self._raw = raw
        self._stream = codec.writer(raw, level)

    def _write(self, b: Any) -> int:
        self._stream.write(b)
        return memoryview(b).nbytes

    def _commit(self) -> None:
        self._stream.close()
        self._raw.close()

    def _discard(self) -> None:
        abort = getattr(self._raw, "abort", None)
        if abort is None:
            logger.warning("%s cannot discard a partial write; closing it as written", self.name)
        else:
            abort()
        try:
            self._stream.close()
        except Exception:  # the stream is being thrown away; its end does not matter
            logger.debug("ending the discarded stream of %s failed", self.name, exc_info=True)
        finally:
            self._raw.close()
