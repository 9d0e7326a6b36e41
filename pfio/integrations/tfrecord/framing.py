"""The TFRecord framing: each record is

    uint64 length (little endian)
    uint32 masked CRC-32C of the 8 length bytes
    byte   data[length]
    uint32 masked CRC-32C of the data

where a masked CRC is ``((crc >> 15) | (crc << 17)) + 0xa282ead8`` modulo 2**32 (CRC-32C is
the Castagnoli polynomial, as iSCSI and ext4 use it). CRC-32C comes from the
``google-crc32c`` package (``pip install 'pfio[tfrecord]'``), whose C extension uses the
CPU's CRC instructions.
"""

from __future__ import annotations

import struct
from typing import Any

try:
    from google_crc32c import value as _crc32c
except ImportError as exc:  # pragma: no cover - exercised where the extra is not installed
    raise ImportError("pfio.integrations.tfrecord needs the google-crc32c package: "
                      "pip install 'pfio[tfrecord]'") from exc

#: bytes before a record's data: the length and its masked CRC
HEADER_SIZE = 12
#: bytes after a record's data: its masked CRC
FOOTER_SIZE = 4

_MASK_DELTA = 0xA282EAD8
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")
#: ``(length, masked CRC of the length)`` from a header
unpack_header = struct.Struct("<QI").unpack_from
#: ``(masked CRC,)`` from a footer
unpack_crc = _CRC.unpack_from


class TFRecordError(ValueError):
    """A TFRecord file that is corrupt (a length or data CRC that does not match) or
    truncated (it ends inside a record).

    It is a ``ValueError``: the bytes were read, they are not a valid record (an
    ``OSError`` is left to failures to read them). ``url`` is the file and ``offset`` the
    byte offset, in the uncompressed stream, of the record at fault; both are in the
    message.
    """

    def __init__(self, url: str, offset: int, problem: str) -> None:
        super().__init__(f"{url}: {problem} (record at byte offset {offset})")
        self.url = url
        self.offset = offset


def masked_crc(data: Any) -> int:
    """The masked CRC-32C of ``data`` (any bytes-like object)."""
    if type(data) is not bytes:  # google-crc32c's C extension takes bytes only
        data = bytes(memoryview(data).cast("B"))
    crc: int = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(record: Any) -> tuple[bytes, bytes]:
    """The ``(header, footer)`` written around ``record`` (bytes-like)."""
    length = _LENGTH.pack(len(record))
    return length + _CRC.pack(masked_crc(length)), _CRC.pack(masked_crc(record))


__all__ = ["FOOTER_SIZE", "HEADER_SIZE", "TFRecordError", "frame", "masked_crc",
           "unpack_crc", "unpack_header"]
