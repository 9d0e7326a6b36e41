"""Opening a TFRecord file on any pfio URL, and its compression.

TensorFlow writes a compressed TFRecord file as one compressed stream of the records:
``"GZIP"`` a gzip stream, ``"ZLIB"`` a zlib stream (RFC 1950: a two-byte header, deflate data,
an Adler-32), both made by zlib with its default level and strategy and a ``memLevel`` of 9.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from ..._uri import parse_uri
from ...api import from_url, open_url
from ...compression.decoder import DecoderReader
from ...fs.file_types import as_binary_io

#: zlib's ``wbits`` for each compression: a gzip stream, a zlib stream
WBITS = {"gzip": 16 + zlib.MAX_WBITS, "zlib": zlib.MAX_WBITS}
#: file name endings that ``compression="infer"`` maps to a compression
EXTENSIONS = {".gz": "gzip", ".gzip": "gzip", ".zlib": "zlib", ".zz": "zlib"}
#: zlib's ``memLevel`` in TensorFlow's record writer (zlib's own default is 8)
MEM_LEVEL = 9


def compression_of(url: str, compression: str | None) -> str | None:
    """``"gzip"``, ``"zlib"`` or None (stored as is) for ``compression`` (None, ``""``,
    ``"gzip"``, ``"zlib"``, ``"infer"``; any case, so TensorFlow's ``"GZIP"`` works too).
    ``"infer"`` goes by the end of ``url``: ``.gz``/``.gzip`` gzip, ``.zlib``/``.zz`` zlib,
    anything else uncompressed (the content is not sniffed: the first bytes of a plain
    TFRecord file are a record length, which can be anything).

    Raises:
        ValueError: an unknown compression (the message lists the known ones).
    """
    if compression is None or compression == "":
        return None
    name = compression.lower() if isinstance(compression, str) else None
    if name == "infer":
        lowered = url.lower()
        return next((kind for ext, kind in EXTENSIONS.items() if lowered.endswith(ext)), None)
    if name in WBITS:
        return name
    raise ValueError(f"unknown TFRecord compression {compression!r}; supported: None, '', "
                     "'gzip', 'zlib', 'infer'")


@contextmanager
def opened(url: str, mode: str, fs_options: dict[str, Any],
           **open_options: Any) -> Iterator[IO[bytes]]:
    """The file at ``url`` opened in binary ``mode``; ``fs_options`` go to
    :func:`pfio.from_url` (without any, :func:`pfio.open_url` opens it, sharing an archive
    on the way with the rest of the process). A writer left by an exception publishes
    nothing (pfio's writers are atomic)."""
    if not fs_options:
        with open_url(url, mode, **open_options) as f:
            yield f
        return
    parent, name = parse_uri(url).split()
    with from_url(str(parent), **fs_options) as fs, fs.open(name, mode, **open_options) as f:
        yield f


def decompressing(raw: IO[bytes], compression: str) -> IO[bytes]:
    """The decompressed bytes of ``raw`` (a binary reader) as a raw stream; errors as
    ``DECODE_ERRORS``. Concatenated streams read as one."""
    wbits = WBITS[compression]
    return as_binary_io(DecoderReader(raw, lambda: zlib.decompressobj(wbits), bounded=True))


#: the exceptions a decompressing stream raises for bad or truncated data (reported by
#: :func:`pfio.compression.streams.decode_error`, as pfio's transparent decompression reports
#: them)
DECODE_ERRORS = (zlib.error, EOFError)


def compressor(compression: str) -> Any:
    """A zlib compressor making the stream TensorFlow's writer makes for ``compression``."""
    return zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, WBITS[compression],
                            MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY)
