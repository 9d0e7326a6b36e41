"""A raw reader that decompresses through a decompressor object (``zlib.decompressobj``,
``zstandard``'s ``decompressobj``), stream after stream.

It reads the compressed file in large chunks, checks integrity in C (gzip's CRC and length
are verified by zlib itself), reads concatenated streams as one, and notices input that stops
inside a stream, which ``zstandard``'s own stream reader lets pass.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import IO, Any

#: compressed bytes read from the underlying file at a time
CHUNK_SIZE = 256 * 1024

#: the least output asked of a bounded decompressor per call
MIN_OUTPUT = 64 * 1024


class DecoderReader(io.RawIOBase):
    """The decompressed bytes of the streams in ``raw``.

    Args:
        raw: the compressed file, in binary mode.
        new_decoder: makes a decompressor object for one stream: ``decompress(data[,
            max_length])``, ``eof``, ``unused_data`` (and ``unconsumed_tail`` if bounded).
        bounded: the decompressor takes ``max_length``, so the output of one call stays small.
            An unbounded one decompresses a whole chunk of input at once, which for a
            pathologically compressible stream can be a large buffer.
        padded: zero bytes after a stream are skipped (a gzip file may be padded with zeros,
            between or after its streams, as the gzip command and Python's :mod:`gzip`
            accept; a file that starts with zeros is still not a stream).

    Raises (from reads):
        EOFError: the input ends inside a stream.
        The decompressor's own error: the input is not valid compressed data.
    """

    def __init__(self, raw: IO[bytes], new_decoder: Callable[[], Any], bounded: bool,
                 padded: bool = False) -> None:
        super().__init__()
        self._raw = raw
        self._new_decoder = new_decoder
        self._bounded = bounded
        self._padded = padded
        self._ended_one = False  # a stream ended: zeros may follow
        self._decoder = new_decoder()
        self._in_stream = False
        self._input = b""
        self._output: bytes = b""
        self._offset = 0
        self._raw_eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while self._offset >= len(self._output):
            if not self._fill(len(view)):
                return 0
        count = min(len(view), len(self._output) - self._offset)
        view[:count] = memoryview(self._output)[self._offset:self._offset + count]
        self._offset += count
        return count

    def _fill(self, wanted: int) -> bool:
        """Decompress more; False at the end of the input."""
        if not self._input:
            if self._raw_eof:
                return False
            self._input = self._raw.read(CHUNK_SIZE)
            if not self._input:
                self._raw_eof = True
                if self._in_stream:
                    raise EOFError("compressed stream ended before its end marker")
                return False
        if self._padded and self._ended_one and not self._in_stream:
            self._input = self._input.lstrip(b"\0")
            if not self._input:  # zeros only so far: read on
                self._output, self._offset = b"", 0
                return True
        self._in_stream = True
        decoder = self._decoder
        if self._bounded:
            self._output = decoder.decompress(self._input, max(wanted, MIN_OUTPUT))
            self._input = decoder.unconsumed_tail
        else:
            self._output, self._input = decoder.decompress(self._input), b""
        self._offset = 0
        if decoder.eof:  # the stream ended; what follows it starts the next one
            self._input = decoder.unused_data + self._input
            self._decoder = self._new_decoder()
            self._in_stream = False
            self._ended_one = True
        return True
