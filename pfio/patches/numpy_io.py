"""``numpy.load`` and ``numpy.save`` accept remote URIs.

``load`` reads through a seekable pfio file object (no spool), except with ``mmap_mode``, which
needs a real file: then the object cache provides one. ``save`` writes through pfio: the object
appears whole on success and not at all on error. As ``numpy.save`` does for paths, ``.npy`` is
appended to a URL without it.
"""

from __future__ import annotations

from typing import Any

from ..api import open_url
from .locate import open_for_reading
from .machinery import PatchSpec, define_target
from .targets import is_remote, local_copy, note_written


def _load(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    url, rest = args[0], args[1:]
    if (rest[0] if rest else kwargs.get("mmap_mode")) is not None:
        with local_copy(url) as path:
            return wrapped(path, *rest, **kwargs)
    with open_for_reading(url) as f:
        result = wrapped(f, *rest, **kwargs)
        if hasattr(result, "files"):  # an NpzFile reads lazily: load it now, the file closes
            result = {name: result[name] for name in result.files}
        return result


def _save(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    url = args[0] if args[0].endswith(".npy") else args[0] + ".npy"
    note_written(url)
    with open_url(url, "wb") as f:
        return wrapped(f, *args[1:], **kwargs)


define_target("numpy", [
    PatchSpec("numpy", "load", _load),
    PatchSpec("numpy", "save", _save),
])
