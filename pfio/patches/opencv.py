"""OpenCV: ``imread``, ``imreadmulti``, ``VideoCapture``, ``imwrite`` and ``VideoWriter``
accept remote URIs.

* ``imread``/``imreadmulti`` read a local copy from the object cache; a missing remote file
  gives ``None`` / ``(False, ())`` as a missing local file does.
* ``VideoCapture`` streams the video through a seekable pfio file object
  (``cv2.VideoCapture(fileobj, cv2.CAP_FFMPEG, [])``): no spool, and the object is a real
  ``cv2.VideoCapture``.
* ``imwrite`` writes a local temporary file with the URL's extension and uploads it when OpenCV
  reports success; ``VideoWriter`` writes locally and uploads on ``release()``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ..api import open_url
from .machinery import PatchSpec, define_target
from .targets import is_remote, local_copy, upload_on_success


def _read(missing: Any) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not (args and is_remote(args[0])):
            return wrapped(*args, **kwargs)
        try:
            with local_copy(args[0]) as path:
                return wrapped(path, *args[1:], **kwargs)
        except FileNotFoundError:
            return missing

    return wrapper


def _imwrite(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    with upload_on_success(args[0]) as path:
        ok = wrapped(path, *args[1:], **kwargs)
        if not ok:
            os.unlink(path)  # nothing to upload
        return ok


def _video_capture(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    import cv2

    stream = open_url(args[0], "rb")
    return wrapped(stream, cv2.CAP_FFMPEG, list(kwargs.get("params", [])))


def _video_writer(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    return _uploading_writer_class(wrapped)(args[0], *args[1:], **kwargs)


_writer_classes: dict[type, type] = {}


def _uploading_writer_class(base: type) -> type:
    """A subclass of ``cv2.VideoWriter`` that writes a local file and uploads it on release."""
    cls = _writer_classes.get(base)
    if cls is not None:
        return cls

    class UploadingVideoWriter(base):  # type: ignore[misc, valid-type]
        def __init__(self, url: str, *args: Any, **kwargs: Any) -> None:
            self._pfio_upload = contextlib.ExitStack()
            path = self._pfio_upload.enter_context(upload_on_success(url))
            super().__init__(path, *args, **kwargs)

        def release(self) -> None:
            super().release()
            self._pfio_upload.close()

    UploadingVideoWriter.__name__ = UploadingVideoWriter.__qualname__ = "VideoWriter"
    _writer_classes[base] = UploadingVideoWriter
    return UploadingVideoWriter


define_target("cv2", [
    PatchSpec("cv2", "imread", _read(None)),
    PatchSpec("cv2", "imreadmulti", _read((False, ()))),
    PatchSpec("cv2", "imwrite", _imwrite),
    PatchSpec("cv2", "VideoCapture", _video_capture),
    PatchSpec("cv2", "VideoWriter", _video_writer),
])
