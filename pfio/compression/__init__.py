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
read as one; zero bytes padding a gzip file (between or after its streams) are skipped, as
the gzip command and Python's :mod:`gzip` skip them.

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
from collections.abc import Callable
from typing import IO, Any

from ..fs.modes import Mode
from ..fs.writers import atomic_writer, text_reader
from .codecs import CODECS, MAGIC_SIZE, SUPPORTED, Codec, by_extension, by_magic, by_name
from .streams import CompressingSink, DecodeError, DecompressingReader

#: ``open_file(mode, buffering, encoding, errors, newline)``: the stored file, opened
OpenFile = Callable[[Mode, int, "str | None", "str | None", "str | None"], IO[Any]]

_BINARY_READ = Mode("r", True, False)


def open_compressed(
    open_file: OpenFile,
    name: str,
    where: str,
    mode: Mode,
    compression: str,
    buffering: int = -1,
    encoding: str | None = None,
    errors: str | None = None,
    newline: str | None = None,
    compresslevel: int | None = None,
) -> IO[Any]:
    """Open a file through ``compression`` (see the module documentation).

    ``FS.open`` calls this when its ``compression`` argument is not None.

    Args:
        open_file: opens the stored (compressed) file in a given mode.
        name: the file's name (its extension names a codec under ``"infer"``).
        where: a readable name of the file, for errors.
        mode, buffering, encoding, errors, newline: as for ``FS.open``.
        compression: ``"infer"`` or a codec name.
        compresslevel: the codec's level when writing (its default if None).

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
        binary = _open_reader(open_file, name, where, codec, buffering)
        return binary if mode.binary else text_reader(binary, encoding, errors, newline)
    codec = codec or by_extension(name)
    if codec is None:
        return open_file(mode, buffering, encoding, errors, newline)
    codec.require()
    raw = open_file(Mode(mode.kind, True, False), -1, None, None, None)
    sink = CompressingSink(raw, codec, where, compresslevel)
    return atomic_writer(sink, mode, buffering, encoding, errors, newline)


def _open_reader(open_file: OpenFile, name: str, where: str, codec: Codec | None,
                 buffering: int) -> IO[bytes]:
    """A buffered reader of the decompressed bytes, or the raw file when ``codec`` is None
    and neither the content nor the name show a codec."""
    if codec is not None:
        codec.require()

    def open_raw() -> IO[bytes]:
        return open_file(_BINARY_READ, -1, None, None, None)

    raw = open_raw()
    try:
        if codec is None:
            head, raw = _head(raw, open_raw)
            codec = by_magic(head) or by_extension(name)
            if codec is None:
                return raw
            codec.require()
        return decompressed(raw, codec, where, open_raw, buffering)
    except BaseException:
        raw.close()
        raise


def decompressed(raw: IO[bytes], codec: Codec, name: str,
                 open_raw: Callable[[], IO[bytes]] | None = None,
                 buffering: int = -1) -> io.BufferedReader:
    """A buffered reader of the decompressed bytes of ``raw`` (a binary reader of ``codec``
    data): seekable, as :class:`~pfio.compression.streams.DecompressingReader` describes
    (backward by rewinding ``raw``, or opening it again with ``open_raw``). Closing it
    closes ``raw``.

    Raises (from reads):
        DecodeError: (an ``OSError``, ``errno.EIO``, ``filename`` = ``name``) corrupt or
            truncated data.
    """
    reader = DecompressingReader(raw, codec, name, open_raw)
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


__all__ = ["open_compressed", "decompressed", "DecodeError", "SUPPORTED", "CODECS", "Codec"]
