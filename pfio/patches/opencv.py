"""OpenCV: ``imread``, ``imreadmulti``, ``VideoCapture``, ``imwrite`` and ``VideoWriter``
accept remote URIs.

* ``imread``/``imreadmulti`` read a local copy from the object cache; a missing remote file
  gives ``None`` / ``(False, ())`` as a missing local file does.
* ``VideoCapture`` opens a local copy from the object cache and is a real
  ``cv2.VideoCapture``. (OpenCV 5.0 can also read a Python file object, but its
  ``release()`` then calls back into Python without the GIL and aborts the process, so pfio
  does not hand it one.)
* ``imwrite`` writes a local temporary file with the URL's extension and uploads it when OpenCV
  reports success; ``VideoWriter`` writes locally and uploads on ``release()`` (it returns a
  transparent proxy of a real ``cv2.VideoWriter``).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

import wrapt

from .machinery import PatchSpec, define_target
from .targets import is_remote, local_copy, upload_on_success

if TYPE_CHECKING:  # generic to wrapt's stubs only: ObjectProxy[...] fails at run time
    _Proxy = wrapt.ObjectProxy[Any]
else:
    _Proxy = wrapt.ObjectProxy


def _read(missing: Any) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not (args and is_remote(args[0])):
            return wrapped(*args, **kwargs)
        try:
            with local_copy(args[0]) as path:
                return wrapped(path, *args[1:], **kwargs)
        except FileNotFoundError:
            return missing

    return wrapper


def _imwrite(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    with upload_on_success(args[0]) as path:
        ok = wrapped(path, *args[1:], **kwargs)
        if not ok:
            os.unlink(path)  # nothing to upload
        return ok


def _video_capture(wrapped: Any, instance: Any,
                   args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    from ..cache.object_cache import default_object_cache

    try:
        path = default_object_cache().get_path(args[0])
    except FileNotFoundError:
        return wrapped()  # a capture that is not opened, as for a missing local file
    # the capture opens the file at once and keeps it open: eviction cannot take it away
    return wrapped(path, *args[1:], **kwargs)


def _video_writer(wrapped: Any, instance: Any, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    lease = contextlib.ExitStack()
    path = lease.enter_context(upload_on_success(args[0]))
    try:
        writer = wrapped(path, *args[1:], **kwargs)
    except BaseException as exc:
        lease.__exit__(type(exc), exc, exc.__traceback__)
        raise
    return _UploadingVideoWriter(writer, lease)


class _UploadingVideoWriter(_Proxy):
    """A ``cv2.VideoWriter`` (``isinstance`` holds) writing a local file that is uploaded on
    ``release()``.

    A proxy rather than a subclass: subclass instances of OpenCV's types that carry Python
    attributes crash the garbage collector.
    """

    def __init__(self, writer: Any, lease: contextlib.ExitStack) -> None:
        super().__init__(writer)
        self._self_lease = lease

    def release(self) -> None:
        self.__wrapped__.release()
        self._self_lease.close()


define_target("cv2", [
    PatchSpec("cv2", "imread", _read(None)),
    PatchSpec("cv2", "imreadmulti", _read((False, ()))),
    PatchSpec("cv2", "imwrite", _imwrite),
    PatchSpec("cv2", "VideoCapture", _video_capture),
    PatchSpec("cv2", "VideoWriter", _video_writer),
])
