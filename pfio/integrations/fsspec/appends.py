"""Appending through the fsspec bridge to a backend that cannot append (S3).

An S3 object cannot grow: pfio's S3 filesystem refuses ``"a"`` modes. Code written for
fsspec's local filesystem appends all the same (Lightning's ``CSVLogger`` appends a few rows
to ``metrics.csv`` at each save), so the bridge opens such a file by rewriting it: the file
handed out is a new version of the object that starts with its current bytes; what is
written goes after them, and closing it replaces the object whole (atomically, as every pfio
write: an error in the ``with`` block leaves the old object in place).

Each append thus reads and uploads the whole file: fine for logs of a few MiB, not for
growing large files. Two writers appending to one object at once do not add up: the last to
close wins. A codec cannot be appended to this way: ``compression`` that names one raises
``io.UnsupportedOperation``.
"""

from __future__ import annotations

import io
import shutil
from typing import IO, Any

from ...compression.codecs import by_extension, by_name
from ...fs.base import FS
from ...fs.modes import parse_mode
from ...fs.writers import AtomicTextWriter, discard


def open_rewriting(fs: FS, name: str, where: str, mode: str, compression: str | None = None,
                   buffering: int = -1, encoding: str | None = None, errors: str | None = None,
                   newline: str | None = None, **kwargs: Any) -> IO[Any]:
    """Open ``name`` of ``fs`` to append (``mode`` ``"a"`` or ``"ab"``) by rewriting it;
    ``where`` names it in errors.

    Raises:
        io.UnsupportedOperation: ``compression`` names a codec (or infers one).
        IsADirectoryError: ``name`` is a directory.
    """
    parsed = parse_mode(mode)
    codec = by_name(compression) if compression else None
    if codec is None and compression == "infer":
        codec = by_extension(name)
    if codec is not None:
        raise io.UnsupportedOperation(
            f"{where}: this backend cannot append, and a compressed file cannot "
            "be appended to by rewriting it: write it whole in mode 'w'")
    writer = fs.open(name, "wb", buffering=buffering)
    try:
        with fs.open(name, "rb") as old:
            shutil.copyfileobj(old, writer, 1 << 20)
    except FileNotFoundError:
        pass
    except BaseException:
        discard(writer)
        writer.close()
        raise
    if parsed.binary:
        return writer
    return AtomicTextWriter(writer, encoding=encoding, errors=errors, newline=newline,
                            line_buffering=buffering == 1)
