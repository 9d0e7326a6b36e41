"""``builtins.open`` and ``io.open`` accept remote URIs: the file is streamed by pfio.

``open("s3://bucket/a.txt")`` returns a pfio file object (read-ahead, ranged reads; reads go
through the object cache with ``patch_all(cache=True)``). Writes go to a local file uploaded
atomically on close, which has a file descriptor and, in the update modes, reads and seeks
(see :mod:`pfio.patches.spool`); appending is left to the filesystem. An ``os.PathLike``
object whose path is a URL (an entry of the patched ``os.scandir``) opens that URL. Local
paths, ints and other path objects reach the original ``open``.

Modules that took their own reference to ``open`` at import (``tarfile``, ``bz2``) get the
patched one too, and ``tarfile``'s stream modes, which open paths with ``os.open``, open URLs
through pfio: ``tarfile.open(url)`` works in every mode, as do ``gzip``, ``bz2``, ``lzma``
and ``zipfile`` on URLs.
"""

from __future__ import annotations

import builtins
import functools
import io
from typing import Any

from ..api import open_url
from ..fs.modes import parse_mode
from .locate import cache_on, open_for_reading, refuse_directory_name
from .machinery import PatchSpec, define_target
from .spool import APPEND_WORKAROUND, open_spooled
from .targets import is_remote, note_written, remote_path


def _replace_open(original: Any) -> Any:
    """``open`` that sends URLs to pfio and everything else, at the cost of one Python call,
    to ``original``."""

    @functools.wraps(original)
    def open(file: Any, mode: str = "r", buffering: int = -1, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None, closefd: bool = True,
             opener: Any = None) -> Any:
        # local paths leave at the first test: this runs on every open() of the process
        if type(file) is not str:
            url = remote_path(file)  # an os.PathLike naming a URL; None for fds, paths
            if url is None:
                return original(file, mode, buffering, encoding, errors, newline, closefd,
                                opener)
            file = url
        elif "://" not in file or not is_remote(file):
            return original(file, mode, buffering, encoding, errors, newline, closefd, opener)
        if opener is not None:
            raise ValueError(f"open(): 'opener' cannot be used with the URL {file!r}")
        writing = any(c in mode for c in "wax+")
        if file.endswith("/"):
            refuse_directory_name(file, writing)
        if writing:
            note_written(file)
            parsed = parse_mode(mode)
            if parsed.kind != "a":
                return open_spooled(file, parsed, buffering, encoding, errors, newline)
            try:
                return open_url(file, mode, **_options(buffering, encoding, errors, newline))
            except io.UnsupportedOperation as exc:
                raise io.UnsupportedOperation(f"{exc}: {APPEND_WORKAROUND}") from exc
        elif cache_on() and buffering == -1 and mode in ("r", "rb", "rt", "br", "tr"):
            f = open_for_reading(file)
            if "b" in mode:
                return f
            return io.TextIOWrapper(f, encoding, errors, newline)
        return open_url(file, mode, **_options(buffering, encoding, errors, newline))

    return open


def _options(buffering: int, encoding: str | None, errors: str | None,
             newline: str | None) -> dict[str, Any]:
    """The keyword arguments of ``open_url`` that ``open``'s arguments set."""
    options: dict[str, Any] = {"encoding": encoding, "errors": errors, "newline": newline}
    if buffering != -1:
        options["buffering"] = buffering
    return {k: v for k, v in options.items() if v is not None}


def _low_level_file(wrapped: Any, instance: Any,
                    args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``tarfile``'s stream modes (``"r|*"``, ``"w|gz"``) open a path with ``os.open``
    through ``tarfile._LowLevelFile``; a URL is opened with pfio instead (it has the same
    ``read``, ``write`` and ``close``)."""
    url = remote_path(args[0]) if args else None
    if url is None:
        return wrapped(*args, **kwargs)
    mode = args[1] if len(args) > 1 else kwargs["mode"]
    return builtins.open(url, mode + "b")


define_target("builtins", [
    PatchSpec("builtins", "open", replace=_replace_open),
    PatchSpec("io", "open", replace=_replace_open),
    # modules that keep their own reference to the builtin open, taken at their import
    PatchSpec("tarfile", "bltn_open", replace=_replace_open),
    PatchSpec("bz2", "_builtin_open", replace=_replace_open),
    PatchSpec("tarfile", "_LowLevelFile", _low_level_file),
])
