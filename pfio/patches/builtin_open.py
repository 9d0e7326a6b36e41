"""``builtins.open`` and ``io.open`` accept remote URIs: the file is streamed by pfio.

``open("s3://bucket/a.txt")`` returns a pfio file object (read-ahead, ranged reads; writes are
uploaded atomically on close). Local paths, ints and path objects reach the original ``open``.
"""

from __future__ import annotations

from typing import Any

from ..api import open_url
from .machinery import PatchSpec, define_target
from .targets import is_remote, note_written

_OPEN_ARGS = ("mode", "buffering", "encoding", "errors", "newline")


def _open(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    file = args[0] if args else kwargs.get("file")
    # local paths leave at the first test: this runs on every open() of the process
    if type(file) is not str or "://" not in file or not is_remote(file):
        return wrapped(*args, **kwargs)
    bound = dict(zip(("file",) + _OPEN_ARGS, args, strict=False))
    bound.update(kwargs)
    url = bound.pop("file")
    bound.pop("closefd", None)
    if bound.pop("opener", None) is not None:
        raise ValueError(f"open(): 'opener' cannot be used with the URL {url!r}")
    if bound.get("buffering") == -1:
        del bound["buffering"]
    if any(c in bound.get("mode", "r") for c in "wax+"):
        note_written(url)
    return open_url(url, **bound)


define_target("builtins", [
    PatchSpec("builtins", "open", _open),
    PatchSpec("io", "open", _open),
])
