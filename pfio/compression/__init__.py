"""Transparent compression for ``FS.open`` and ``open_url``.

    with pfio.open_url("s3://bucket/logs/day1.jsonl.gz", "r", compression="infer") as f:
        for line in f: ...
    with fs.open("out.csv.zst", "w", compression="infer") as f:
        f.write("a,b\\n")

``compression`` is:

- ``None`` (the default): the bytes as stored, nothing is decompressed or compressed.
- ``"infer"``: for writes, from the file name's extension (``.gz``/``.tgz``: gzip, ``.bz2``,
  ``.xz``, ``.zst``/``.zstd``), a name without one is written as is. For reads, from the
  magic bytes at the start of the file, else from the extension (so a damaged ``.gz`` file
  reports its damage), else the file is read as stored.
- a codec name: ``"gzip"``, ``"bz2"``, ``"xz"``, ``"zstd"`` (zstd needs the ``zstandard``
  package: ``pip install 'pfio[zstd]'``; without it an ``ImportError`` says so).

Reads stream: the compressed file is read and decompressed piece by piece, never loaded
whole. Text mode decodes on top. ``seek`` works: forward by decompressing up to the target,
backward by decompressing again from the start (costly on large files: avoid it in loops),
from the end by decompressing the whole file once. Concatenated streams (``cat a.gz b.gz``)
read as one.

Writes compress on the fly into the filesystem's atomic writer: the file is published when
closed, and not at all when the ``with`` block that wrote it raised. Append mode (``"a"``)
adds a new stream after the existing ones (every codec reads them as one); update modes
(``"+"``) raise ``io.UnsupportedOperation``. ``compresslevel=`` sets the level (default:
gzip 6, bz2 9, xz 6, zstd 3); gzip headers carry no file name and no timestamp, so the
same data compresses to the same bytes.

Errors: bad or truncated compressed data raises ``OSError`` with ``errno.EIO``, a message
saying ``corrupt``/``truncated`` and the codec, and ``filename`` set to the file's URL, for
every codec alike. An unknown codec name raises ``ValueError`` listing the supported ones.
"""

from __future__ import annotations

import io
from typing import IO, TYPE_CHECKING, Any

from ..fs.modes import Mode
from ..fs.writers import atomic_writer, text_reader
from .codecs import CODECS, MAGIC_SIZE, SUPPORTED, Codec, by_extension, by_magic, by_name
from .streams import CompressingSink, DecompressingReader

if TYPE_CHECKING:
    from ..fs.base import FS

_BINARY_READ = Mode("r", True, False)


def open_compressed(
    fs: FS,
    path: str,
    mode: Mode,
    compression: str,
    buffering: int = -1,
    encoding: str | None = None,
    errors: str | None = None,
    newline: str | None = None,
    compresslevel: int | None = None,
    **kwargs: Any,
) -> IO[Any]:
    """Open ``path`` on ``fs`` through ``compression`` (see the module documentation).

    ``FS.open`` calls this when its ``compression`` argument is not None; the other
    arguments are those of ``FS.open``, ``kwargs`` going to the backend.

    Raises:
        ValueError: an unknown ``compression``.
        ImportError: zstd without the ``zstandard`` package.
        io.UnsupportedOperation: an update mode (``"+"``).
        OSError: (``errno.EIO``, from reads) corrupt or truncated compressed data.
    """
    codec = by_name(compression)
    if mode.plus:
        raise io.UnsupportedOperation("compressed files cannot be opened in update ('+') modes")
    if mode.kind == "r":
        binary = _open_reader(fs, path, codec, buffering, kwargs)
        return binary if mode.binary else text_reader(binary, encoding, errors, newline)
    codec = codec or by_extension(path)
    if codec is None:
        return fs._open(path, mode, buffering, encoding, errors, newline, **kwargs)
    codec.require()
    raw = fs._open(path, Mode(mode.kind, True, False), -1, None, None, None, **kwargs)
    sink = CompressingSink(raw, codec, fs._describe(path), compresslevel)
    return atomic_writer(sink, mode, buffering, encoding, errors, newline)


def _open_reader(fs: FS, path: str, codec: Codec | None, buffering: int,
                 kwargs: dict[str, Any]) -> IO[bytes]:
    """A buffered reader of the decompressed bytes, or the raw file when ``codec`` is None
    and neither the content nor the name show a codec."""
    if codec is not None:
        codec.require()

    def open_raw() -> IO[bytes]:
        return fs._open(path, _BINARY_READ, -1, None, None, None, **kwargs)

    raw = open_raw()
    try:
        if codec is None:
            head, raw = _head(raw, open_raw)
            codec = by_magic(head) or by_extension(path)
            if codec is None:
                return raw
            codec.require()
        reader = DecompressingReader(open_raw, codec, fs._describe(path), raw)
    except BaseException:
        raw.close()
        raise
    return io.BufferedReader(reader, buffering if buffering > 1 else io.DEFAULT_BUFFER_SIZE)


def _head(raw: IO[bytes], open_raw: Any) -> tuple[bytes, IO[bytes]]:
    """The first bytes of ``raw`` and a file positioned at the start again (``raw`` itself
    when it can peek or seek, a new one otherwise)."""
    peek = getattr(raw, "peek", None)
    if peek is not None:
        head = peek(MAGIC_SIZE)[:MAGIC_SIZE]
        if len(head) == MAGIC_SIZE or not raw.seekable():
            return head, raw
    head = raw.read(MAGIC_SIZE)
    if raw.seekable():
        raw.seek(0)
        return head, raw
    raw.close()
    return head, open_raw()


__all__ = ["open_compressed", "SUPPORTED", "CODECS", "Codec"]
