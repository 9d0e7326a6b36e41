"""zstd streams through the optional ``zstandard`` package (``pip install 'pfio[zstd]'``).

``zstandard``'s own stream reader ends quietly on a truncated frame, so reading goes through
:class:`~pfio.compression.decoder.DecoderReader`, which notices a stream that stops inside a
frame.
"""

from __future__ import annotations

from types import ModuleType
from typing import IO, TYPE_CHECKING

from .decoder import DecoderReader

if TYPE_CHECKING:
    from .codecs import Compressing

#: the compression level when none is given (the zstd command's default)
DEFAULT_LEVEL = 3


def require() -> ModuleType:
    """Import and return the ``zstandard`` module.

    Raises:
        ImportError: it is not installed; the message names the extra that installs it.
    """
    try:
        import zstandard
    except ImportError as exc:
        raise ImportError(
            "zstd compression needs the 'zstandard' package: pip install 'pfio[zstd]'"
        ) from exc
    return zstandard


def decode_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean bad or truncated zstd data."""
    return (EOFError, require().ZstdError)


def writer(raw: IO[bytes], level: int | None) -> Compressing:
    """A writer compressing into ``raw`` (with a checksum, as the zstd command writes);
    closing it ends the frame and leaves ``raw`` open."""
    compressor = require().ZstdCompressor(level=DEFAULT_LEVEL if level is None else level,
                                          write_checksum=True)
    stream: Compressing = compressor.stream_writer(raw, closefd=False)
    return stream


def reader(raw: IO[bytes]) -> DecoderReader:
    """A reader of the decompressed bytes of ``raw`` (one or more concatenated frames)."""
    context = require().ZstdDecompressor()
    return DecoderReader(raw, context.decompressobj, bounded=False)
