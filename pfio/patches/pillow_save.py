"""``PIL.Image.Image.save`` accepts remote URIs.

``image.save("s3://bucket/out/0001.png")`` saves to a local temporary file that keeps the
URL's extension, so PIL picks the format from it as it does for a path (or from
``format=``), and uploads the file when the save succeeds: the object appears whole, and
not at all when the save raises. ``append=True`` (GIF, TIFF, PDF, ...) first copies the
existing object to the temporary file. File objects and local paths reach PIL untouched.
"""

from __future__ import annotations

from typing import Any

from .machinery import PatchSpec, define_target
from .targets import is_remote, upload_on_success


def _save(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    with upload_on_success(args[0], download_first=bool(kwargs.get("append"))) as path:
        return wrapped(path, *args[1:], **kwargs)


define_target("PIL", [PatchSpec("PIL.Image", "save", _save, owner="Image")])
