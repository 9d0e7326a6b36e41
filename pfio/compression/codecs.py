"""The codecs: their names, file extensions, magic bytes, and stream factories.

gzip, bz2 and xz come from the standard library; zstd from the optional ``zstandard`` package
(the ``zstd`` extra), imported only when a zstd stream is opened.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Protocol

from . import zstd
from .decoder import DecoderReader

if TYPE_CHECKING:
    from typing_extensions import Buffer


class Decompressed(Protocol):
    """What a codec's reader returns (a ``DecoderReader``, ``BZ2File``, ``LZMAFile``)."""

    def readinto(self, buffer: Buffer, /) -> int: ...

    def close(self) -> None: ...


class Compressing(Protocol):
    """What a codec's writer returns (a ``GzipFile``, ``BZ2File``, ``LZMAFile``, or
    zstandard's stream writer)."""

    def write(self, data: Buffer, /) -> int: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Codec:
    """One compression format.

    Attributes:
        name: the name users pass as ``compression=``.
        extensions: file name endings that ``compression="infer"`` maps to this codec.
        magic: the bytes every stream of this format starts with.
        reader: wraps a binary reader of compressed bytes into one of decompressed bytes.
        writer: wraps a binary writer into one that compresses (``level`` or the codec's
            default); closing the result finishes the stream but leaves the writer open.
        decode_errors: the exception classes the reader raises on bad or truncated data.
    """

    name: str
    extensions: tuple[str, ...]
    magic: bytes
    reader: Callable[[IO[bytes]], Decompressed]
    writer: Callable[[IO[bytes], int | None], Compressing]
    decode_errors: Callable[[], tuple[type[BaseException], ...]]

    def require(self) -> None:
        """Check that the codec's package is installed.

        Raises:
            ImportError: it is not (the message names the extra to install).
        """
        if self.name == "zstd":
            zstd.require()


def _gzip_reader(raw: IO[bytes]) -> Decompressed:
    # zlib parses the gzip header and checks the CRC and length itself (wbits 16 + 15)
    return DecoderReader(raw, lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), bounded=True,
                         padded=True)


def _gzip_writer(raw: IO[bytes], level: int | None) -> Compressing:
    # no file name and a zero timestamp in the header: the same bytes give the same file
    return gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                         compresslevel=6 if level is None else level, mtime=0)


def _bz2_writer(raw: IO[bytes], level: int | None) -> Compressing:
    return bz2.BZ2File(raw, "wb", compresslevel=9 if level is None else level)


def _xz_writer(raw: IO[bytes], level: int | None) -> Compressing:
    return lzma.LZMAFile(raw, "wb", format=lzma.FORMAT_XZ, preset=level)


def _stdlib_errors() -> tuple[type[BaseException], ...]:
    return (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError)


CODECS: dict[str, Codec] = {
    codec.name: codec
    for codec in (
        Codec("gzip", (".gz", ".tgz"), b"\x1f\x8b", _gzip_reader, _gzip_writer, _stdlib_errors),
        Codec("bz2", (".bz2",), b"BZh", lambda raw: bz2.BZ2File(raw, "rb"), _bz2_writer,
              _stdlib_errors),
        Codec("xz", (".xz",), b"\xfd7zXZ\x00",
              lambda raw: lzma.LZMAFile(raw, "rb", format=lzma.FORMAT_XZ), _xz_writer,
              _stdlib_errors),
        Codec("zstd", (".zst", ".zstd"), b"\x28\xb5\x2f\xfd", zstd.reader, zstd.writer,
              zstd.decode_errors),
    )
}

#: the names ``compression=`` accepts besides ``None``
SUPPORTED = ("infer", *CODECS)

#: the longest magic, the number of bytes to look at when inferring from content
MAGIC_SIZE = max(len(codec.magic) for codec in CODECS.values())


def by_name(compression: str) -> Codec | None:
    """The codec named ``compression``; None for ``"infer"``.

    Raises:
        ValueError: an unknown name (the message lists the supported ones).
    """
    if compression == "infer":
        return None
    codec = CODECS.get(compression) if isinstance(compression, str) else None
    if codec is None:
        raise ValueError(
            f"unknown compression {compression!r}; supported: None, "
            + ", ".join(repr(name) for name in SUPPORTED)
        )
    return codec


def by_extension(path: str) -> Codec | None:
    """The codec whose extension ends ``path`` (case-insensitive), or None."""
    lowered = path.lower()
    for codec in CODECS.values():
        if lowered.endswith(codec.extensions):
            return codec
    return None


def by_magic(head: bytes) -> Codec | None:
    """The codec whose magic bytes start ``head``, or None."""
    for codec in CODECS.values():
        if head.startswith(codec.magic):
            return codec
    return None


def is_decode_error(codec: Codec, exc: BaseException) -> bool:
    """True when ``exc`` says the compressed data is bad, not that reading it failed.

    The bz2 module reports bad data with a plain ``OSError`` without an errno, which
    genuine IO errors (from the OS or a socket) always carry.
    """
    if isinstance(exc, codec.decode_errors()):
        return True
    return type(exc) is OSError and exc.errno is None


def describe(exc: BaseException) -> str:
    """``truncated`` or ``corrupt``, for the message of a decode error."""
    return "truncated" if isinstance(exc, EOFError) else "corrupt"


__all__ = ["Codec", "CODECS", "SUPPORTED", "MAGIC_SIZE", "by_name", "by_extension", "by_magic",
           "is_decode_error", "describe"]
