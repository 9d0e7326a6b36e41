"""``TFRecordWriter``: TFRecord files written on any pfio URL, published atomically."""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import IO, Any

from .files import compression_of, compressor, opened
from .framing import frame

logger = logging.getLogger(__name__)


class TFRecordWriter:
    """Writes records to a TFRecord file at ``url`` (any pfio URL), as
    ``tf.io.TFRecordWriter`` writes them.

        with TFRecordWriter("s3://bucket/train-00000.tfrecord") as writer:
            for example in examples:
                writer.write(make_example(example))

    The bytes are those TensorFlow writes: the same framing and CRCs; with ``"gzip"`` or
    ``"zlib"`` the same compressed stream (zlib's default level and strategy, a
    ``memLevel`` of 9, as TensorFlow's writer sets them), so with the same zlib the same
    bytes (a different zlib build may compress differently: the decompressed bytes are
    the same).

    The file is published when :meth:`close` (or the end of the ``with`` block) succeeds,
    all at once (pfio's writers are atomic: a local file is renamed into place, an S3
    object is one PUT or a completed multipart upload). When the ``with`` block raises,
    nothing is published; a writer dropped without ``close()`` publishes nothing either.

    Args:
        url: where the file goes.
        compression: None or ``""`` (none), ``"gzip"``, ``"zlib"`` (any case), or
            ``"infer"`` (by the name's ending, see :func:`iter_records`).
        fs_options: options of :func:`pfio.from_url` (``endpoint=...``).

    Raises:
        ValueError: an unknown ``compression``.
    """

    def __init__(self, url: str, compression: str | None = None, **fs_options: Any) -> None:
        self.url = url
        self.compression = compression_of(url, compression)
        #: records written so far
        self.count = 0
        self._stack = ExitStack()
        self._file: IO[bytes] = self._stack.enter_context(opened(url, "wb", fs_options))
        self._compressor = compressor(self.compression) if self.compression else None
        self._closed = False

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called (or the ``with`` block ended)."""
        return self._closed

    def write(self, record: bytes | bytearray | memoryview) -> None:
        """Append one record (any bytes-like object)."""
        if self._closed:
            raise ValueError(f"write to a closed TFRecordWriter ({self.url})")
        if type(record) is not bytes:
            record = bytes(memoryview(record).cast("B"))
        header, footer = frame(record)
        if self._compressor is None:
            out = self._file
            out.write(header)
            out.write(record)
            out.write(footer)
        else:
            compress = self._compressor.compress
            self._file.write(compress(header) + compress(record) + compress(footer))
        self.count += 1

    def flush(self) -> None:
        """Hand the bytes buffered so far to the filesystem's writer (an S3 upload sends
        its full parts). Nothing becomes visible before :meth:`close`; a compressed
        stream is not flushed (that would change its bytes), only what it has output."""
        if self._closed:
            raise ValueError(f"flush of a closed TFRecordWriter ({self.url})")
        self._file.flush()

    def close(self) -> None:
        """Finish the file and publish it. Closing again does nothing.

        Raises:
            OSError: the file could not be published (then nothing is).
        """
        if self._closed:
            return
        self._closed = True
        try:
            if self._compressor is not None:
                self._file.write(self._compressor.flush())
        except BaseException as exc:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._stack.close()
        logger.debug("wrote %d records to %s", self.count, self.url)

    def abort(self) -> None:
        """Close without publishing anything."""
        if self._closed:
            return
        self._closed = True
        error = RuntimeError("TFRecordWriter aborted")
        self._stack.__exit__(type(error), error, None)

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        elif not self._closed:
            self._closed = True
            self._stack.__exit__(exc_type, exc, tb)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.count} records"
        return f"TFRecordWriter({self.url!r}, compression={self.compression!r}, {state})"
