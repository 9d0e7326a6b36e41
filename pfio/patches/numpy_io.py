"""NumPy's file functions accept remote URIs: ``load``, ``save``, ``savez``,
``savez_compressed``, ``loadtxt``, ``genfromtxt``, ``savetxt``.

``load`` reads through a seekable pfio file object (no spool), except with ``mmap_mode``,
which needs a real file: then the object cache provides one. The ``NpzFile`` that ``load``
returns for an ``.npz`` is NumPy's own, reading members lazily from the remote file, which
it holds open until ``close()`` (or the end of its ``with`` block), as for a local path.
``loadtxt`` and ``genfromtxt`` read the text through pfio, decompressing ``.gz``, ``.bz2``
and ``.xz`` as NumPy does for paths. ``save`` writes through pfio; ``savez``,
``savez_compressed`` and ``savetxt`` write a local temporary file (that keeps the URL's
suffix: ``savetxt`` of ``x.txt.gz`` gzips) uploaded when the call returns: the object
appears whole on success and not at all on error. As NumPy does for paths, ``.npy`` (``save``)
and ``.npz`` (``savez*``) are appended to a URL without them.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from collections.abc import Callable
from typing import IO, Any

from ..api import open_url
from .locate import open_for_reading
from .machinery import PatchSpec, define_target
from .targets import is_remote, local_copy, note_written, upload_on_success

#: how ``loadtxt``/``genfromtxt`` open a compressed file, by suffix (as NumPy's own table)
_DECOMPRESSORS: dict[str, Callable[[IO[bytes]], io.BufferedIOBase]] = {
    ".gz": lambda f: gzip.GzipFile(fileobj=f),
    ".bz2": bz2.BZ2File,
    ".xz": lzma.LZMAFile,
    ".lzma": lzma.LZMAFile,
}


def _path_argument(args: tuple[Any, ...], kwargs: dict[str, Any],
                   name: str) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """``(path, other positional arguments, other keyword arguments)`` of a call whose path
    is the first positional argument or the keyword ``name``."""
    if args:
        return args[0], args[1:], kwargs
    return kwargs.get(name), (), {k: v for k, v in kwargs.items() if k != name}


def _load(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    url, rest, others = _path_argument(args, kwargs, "file")
    if not is_remote(url):
        return wrapped(*args, **kwargs)
    if (rest[0] if rest else others.get("mmap_mode")) is not None:
        with local_copy(url) as path:
            return wrapped(path, *rest, **others)
    f = open_for_reading(url)
    try:
        result = wrapped(f, *rest, **others)
    except BaseException:
        f.close()
        raise
    if hasattr(result, "files") and getattr(result, "fid", False) is None:
        result.fid = f  # an NpzFile reads lazily: it closes the remote file with itself
    else:
        f.close()
    return result


def _save(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    url, rest, others = _path_argument(args, kwargs, "file")
    if not is_remote(url):
        return wrapped(*args, **kwargs)
    url = url if url.endswith(".npy") else url + ".npy"
    note_written(url)
    with open_url(url, "wb") as f:
        return wrapped(f, *rest, **others)


def _writer(parameter: str, extension: str = "") -> Any:
    """The wrapper of a writer whose path is ``parameter`` (first positional, or by name):
    it writes a local file uploaded when the call returns, to the URL with ``extension``
    appended when it does not end with it (as NumPy does for paths)."""

    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        url, rest, others = _path_argument(args, kwargs, parameter)
        if not is_remote(url):
            return wrapped(*args, **kwargs)
        if not url.endswith(extension):
            url += extension
        with upload_on_success(url) as path:
            return wrapped(path, *rest, **others)

    return wrapper


def _loadtext(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    url, rest, others = _path_argument(args, kwargs, "fname")
    if not is_remote(url):
        return wrapped(*args, **kwargs)
    suffix = "." + url.rpartition(".")[2]
    with open_for_reading(url, whole=True) as raw:
        decompress = _DECOMPRESSORS.get(suffix)
        if decompress is None:
            return wrapped(raw, *rest, **others)
        with decompress(raw) as f:
            return wrapped(f, *rest, **others)


define_target("numpy", [
    PatchSpec("numpy", "load", _load, path=(0, "file")),
    PatchSpec("numpy", "save", _save, path=(0, "file")),
    PatchSpec("numpy", "savez", _writer("file", ".npz"), path=(0, "file")),
    PatchSpec("numpy", "savez_compressed", _writer("file", ".npz"), path=(0, "file")),
    PatchSpec("numpy", "savetxt", _writer("fname"), path=(0, "fname")),
    PatchSpec("numpy", "loadtxt", _loadtext, path=(0, "fname")),
    PatchSpec("numpy", "genfromtxt", _loadtext, path=(0, "fname")),
])
