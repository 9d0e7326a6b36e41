"""``torch.load`` and ``torch.save`` accept remote URIs, through seekable pfio file objects.

``torch.save(state, "s3://b/ckpt.pt")`` uploads atomically: an error while saving leaves the
previous checkpoint in place.
"""

from __future__ import annotations

from typing import Any

from ..api import open_url
from .locate import open_for_reading
from .machinery import PatchSpec, define_target
from .targets import is_remote, note_written


def _load(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if args and is_remote(args[0]):
        with open_for_reading(args[0]) as f:
            return wrapped(f, *args[1:], **kwargs)
    if is_remote(kwargs.get("f")):
        with open_for_reading(kwargs.pop("f")) as f:
            return wrapped(f, *args, **kwargs)
    return wrapped(*args, **kwargs)


def _save(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if len(args) > 1 and is_remote(args[1]):
        note_written(args[1])
        with open_url(args[1], "wb") as f:
            return wrapped(args[0], f, *args[2:], **kwargs)
    if is_remote(kwargs.get("f")):
        url = kwargs.pop("f")
        note_written(url)
        with open_url(url, "wb") as f:
            return wrapped(*args, f=f, **kwargs)
    return wrapped(*args, **kwargs)


define_target("torch", [
    PatchSpec("torch", "load", _load),
    PatchSpec("torch", "save", _save),
])
