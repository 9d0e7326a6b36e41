"""Reading TFRecord files on any pfio URL: :func:`iter_records`, and
:func:`iter_records_with_offsets` for readers that resume.

A file is read front to back in large pieces (:data:`CHUNK_SIZE`) into one reusable buffer,
and each record is copied out of it once, as the ``bytes`` yielded: on S3 that is one GET for
the whole object (pfio's reader reads on from the body of its opening GET).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import IO, Any

from ...compression.streams import decode_error
from ...fs.file_types import read_into
from ...fs.skipping import skip
from .files import DECODE_ERRORS, compression_of, decompressing, opened
from .framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    TFRecordError,
    masked_crc,
    unpack_crc,
    unpack_header,
)

logger = logging.getLogger(__name__)

#: bytes read from the file at a time (the buffer grows for a larger record)
CHUNK_SIZE = 1 << 20
#: bytes the opening request of a file resumed inside asks for (a ranged GET on S3, rather
#: than a plain GET of the whole object that the seek would drop)
RESUME_OPENING = 64 << 10


def iter_records(url: str, verify: bool = True, compression: str | None = None,
                 offset: int = 0, **fs_options: Any) -> Iterator[bytes]:
    """The records of the TFRecord file at ``url``, in order, as ``bytes``.

    Args:
        url: any pfio URL (``s3://b/train-00000.tfrecord``, a member of a zip on S3, a local
            path, ``mem://``, ``hdfs://``...).
        verify: check each record's length and data CRCs (as TensorFlow's reader does);
            ``False`` skips both checks (a truncated file is still reported).
        compression: None or ``""`` (stored as is), ``"gzip"``, ``"zlib"`` (TensorFlow's
            ``"GZIP"`` and ``"ZLIB"``, in any case), or ``"infer"`` (by the name's ending:
            ``.gz``/``.gzip``, ``.zlib``/``.zz``; else stored as is).
        offset: start at this byte offset of the (uncompressed) record stream, a record's
            offset as :func:`iter_records_with_offsets` gives it. In a compressed file the
            bytes before it are decompressed and dropped.
        fs_options: options of :func:`pfio.from_url` (``endpoint=...``).

    Raises:
        TFRecordError: (a ``ValueError``) a CRC that does not match, a file that ends inside
            a record, an ``offset`` past the end; the message names ``url`` and the record's
            byte offset.
        OSError: (``errno.EIO``) corrupt or truncated compressed data; failures to read.
        FileNotFoundError: no file at ``url``.
        ValueError: an unknown ``compression``.
    """
    for _, record in iter_records_with_offsets(url, verify, compression, offset, **fs_options):
        yield record


def iter_records_with_offsets(url: str, verify: bool = True, compression: str | None = None,
                              offset: int = 0, **fs_options: Any) -> Iterator[tuple[int, bytes]]:
    """``(offset, record)`` for each record of the file at ``url``: the record's byte offset
    in the (uncompressed) record stream, where passing it as ``offset`` starts reading
    again. Arguments and errors as for :func:`iter_records`."""
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    codec = compression_of(url, compression)
    options = {"first_fetch": RESUME_OPENING} if offset and codec is None else {}
    with opened(url, "rb", fs_options, **options) as raw:
        if codec is None:
            if offset:
                _skip(raw, offset, url)
            yield from _RecordScanner(raw, url, verify, offset)
            return
        stream = decompressing(raw, codec)
        try:
            if offset:
                _skip(stream, offset, url)
            yield from _RecordScanner(stream, url, verify, offset)
        except DECODE_ERRORS as exc:
            raise decode_error(codec, url, exc) from exc


def _skip(f: IO[bytes], offset: int, url: str) -> None:
    moved = skip(f, offset)
    if moved < offset:
        raise TFRecordError(url, offset, f"offset past the end of the record stream "
                            f"({moved} bytes)")


class _RecordScanner:
    """``(offset, record)`` of the records in ``f`` from where it stands (``offset``).

    One buffer, refilled by ``readinto``: the bytes ``[start, end)`` of it are read and not
    yet consumed. A record longer than the buffer grows it, as its bytes arrive (so a
    corrupt length read without ``verify`` ends as a truncated record, not as a huge
    allocation).
    """

    def __init__(self, f: IO[bytes], url: str, verify: bool, offset: int) -> None:
        self._f = f
        self._url = url
        self._verify = verify
        self._offset = offset  # the stream offset of buffer[start]
        self._buffer = bytearray(CHUNK_SIZE)
        self._view = memoryview(self._buffer)
        self._start = 0
        self._end = 0
        self._eof = False

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        verify, url = self._verify, self._url
        while True:
            if self._end - self._start < HEADER_SIZE and not self._fill(HEADER_SIZE):
                if self._end == self._start:
                    return
                self._truncated(f"the file ends inside a record header "
                                f"({self._end - self._start} of {HEADER_SIZE} bytes)")
            start, offset = self._start, self._offset
            length, length_crc = unpack_header(self._buffer, start)
            if verify and masked_crc(bytes(self._view[start:start + 8])) != length_crc:
                raise TFRecordError(url, offset, "corrupt record: the length's CRC does not "
                                    "match (not a TFRecord file, a wrong offset, or damage)")
            size = HEADER_SIZE + length + FOOTER_SIZE
            if self._end - start < size:
                if not self._fill(size):
                    self._truncated(f"the file ends inside a record of {length} bytes "
                                    f"({self._end - self._start} of {size} bytes with its "
                                    "header and footer)")
                start = self._start
            data = start + HEADER_SIZE
            record = bytes(self._view[data:data + length])
            if verify and masked_crc(record) != unpack_crc(self._buffer, data + length)[0]:
                raise TFRecordError(url, offset, f"corrupt record: the CRC of its {length} "
                                    "bytes of data does not match")
            self._start = start + size
            self._offset = offset + size
            yield offset, record

    def _truncated(self, problem: str) -> None:
        raise TFRecordError(self._url, self._offset, f"truncated record: {problem}")

    def _fill(self, need: int) -> bool:
        """Read until ``need`` bytes are available from ``start``; False at the end of the
        file before that."""
        if self._start + need > len(self._buffer):
            self._make_room(need)
        while self._end - self._start < need:
            if self._eof:
                return False
            if self._end == len(self._buffer):
                self._make_room(need)
            got = read_into(self._f, self._view[self._end:])
            if not got:
                self._eof = True
                return False
            self._end += got
        return True

    def _make_room(self, need: int) -> None:
        """Move the unconsumed bytes to the front; when they fill the whole buffer, grow it
        (at most twice its size at a time: a corrupt length must not allocate more than the
        bytes that actually arrive)."""
        kept = self._end - self._start
        if self._start:
            self._view[:kept] = self._view[self._start:self._end]  # a memmove
            self._start, self._end = 0, kept
        if kept == len(self._buffer):
            grown = bytearray(min(2 * kept, need + CHUNK_SIZE))
            grown[:kept] = self._view[:kept]
            self._buffer, self._view = grown, memoryview(grown)
