"""``PIL.Image.open`` accepts remote URIs: the image is read through a pfio file object,
opened to be read through (on S3 one GET per image; through the object cache, one GET on a
miss and none on a hit).

PIL reads lazily, so the file object stays open with the image (as PIL does for a path) and is
closed by ``Image.close()``, or when the image data is loaded.
"""

from __future__ import annotations

from typing import Any

from .locate import open_for_reading
from .machinery import PatchSpec, define_target
from .targets import is_remote


def _open(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    f = open_for_reading(args[0], whole=True)  # decoders read the image through
    try:
        image = wrapped(f, *args[1:], **kwargs)
    except BaseException:
        f.close()
        raise
    image._exclusive_fp = True  # PIL closes the file with the image, as for a path it opened
    image.filename = args[0]
    return image


define_target("PIL", [PatchSpec("PIL.Image", "open", _open)])
