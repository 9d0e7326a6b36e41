"""What the commands share: finding a URL's filesystem, output streams, progress, errors."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any, TypeVar

from ..fs import resolver
from ..fs.base import FS
from ..trace.redact import redact

#: bytes moved per read/write when copying (a large block keeps remote reads few)
CHUNK_SIZE = 1 << 20

T = TypeVar("T")


class UsageError(Exception):
    """A command line that parses but does not make sense (exit status 2)."""


def locate(url: str) -> tuple[FS, str]:
    """The filesystem holding ``url`` and the name in it (``""`` when ``url`` is the root of
    its filesystem); containers along the way are opened. The caller closes the filesystem
    (see :func:`pfio.fs.resolver.locate`)."""
    return resolver.locate(url, shared=False)


def copy_file(src: FS, src_path: str, dst: FS, dst_path: str, **open_options: Any) -> None:
    """Stream the file ``src_path`` of ``src`` to ``dst_path`` on ``dst``, a chunk at a time.
    The destination appears only when the copy is complete."""
    with src.open(src_path, "rb") as reader, dst.open(dst_path, "wb", **open_options) as writer:
        shutil.copyfileobj(reader, writer, CHUNK_SIZE)


def binary_stdout() -> IO[bytes]:
    """Standard output as a binary stream (text written so far is flushed first)."""
    sys.stdout.flush()
    return getattr(sys.stdout, "buffer", sys.stdout)


def progress(items: Iterable[T], total: int, description: str, quiet: bool) -> Iterator[T]:
    """``items``, with a tqdm progress bar on standard error when it is a terminal (and tqdm
    is installed) unless ``quiet``."""
    if quiet or not sys.stderr.isatty():
        return iter(items)
    try:
        from tqdm import tqdm
    except ImportError:
        return iter(items)
    return iter(tqdm(items, total=total, desc=description, unit="file", file=sys.stderr))


def describe_error(exc: BaseException) -> str:
    """A one-line description of ``exc`` for the user, without credentials (the URLs it
    names may carry a ``user:password@`` or a presigned query string)."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None \
            and type(exc).__str__ is OSError.__str__:
        return redact(f"{exc.strerror}: {exc.filename}")
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, KeyError) and not isinstance(exc, OSError) and exc.args:
        text = str(exc.args[0])
    return redact(" ".join(text.split()))
