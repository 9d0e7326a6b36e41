"""``torch.load``, ``torch.save``, ``torch.jit.load`` and ``torch.jit.save`` accept remote
URIs, through seekable pfio file objects.

``torch.save(state, "s3://b/ckpt.pt")`` and ``torch.jit.save(module, url)`` upload
atomically: an error while saving leaves the previous checkpoint in place.
``torch.load(url, mmap=True)`` maps a local file, which the object cache provides (downloaded
once, kept for the next load); the tensors keep their mapping after the call, whatever the
cache evicts later.
"""

from __future__ import annotations

from typing import Any

from ..api import open_url
from .locate import open_for_reading
from .machinery import PatchSpec, define_target
from .targets import is_remote, local_copy, note_written


def _loader(parameter: str) -> Any:
    """The wrapper of a loader whose file argument is ``parameter`` (first positional, or by
    name)."""

    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        url = args[0] if args else kwargs.get(parameter)
        if not is_remote(url):
            return wrapped(*args, **kwargs)
        kwargs = {k: v for k, v in kwargs.items() if k != parameter}
        if kwargs.get("mmap"):
            with local_copy(url) as path:
                return wrapped(path, *args[1:], **kwargs)
        with open_for_reading(url) as f:
            return wrapped(f, *args[1:], **kwargs)

    return wrapper


def _saver(parameter: str) -> Any:
    """The wrapper of a saver whose file argument is ``parameter`` (second positional, or by
    name)."""

    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        url = args[1] if len(args) > 1 else kwargs.get(parameter)
        if not is_remote(url):
            return wrapped(*args, **kwargs)
        kwargs = {k: v for k, v in kwargs.items() if k != parameter}
        note_written(url)
        with open_url(url, "wb") as f:
            if len(args) > 1:
                return wrapped(args[0], f, *args[2:], **kwargs)
            return wrapped(*args, **{**kwargs, parameter: f})

    return wrapper


define_target("torch", [
    PatchSpec("torch", "load", _loader("f"), path=(0, "f")),
    PatchSpec("torch", "save", _saver("f"), path=(1, "f")),
    PatchSpec("torch", "load", _loader("f"), owner="jit", path=(0, "f")),
    PatchSpec("torch", "save", _saver("f"), owner="jit", path=(1, "f")),
])
