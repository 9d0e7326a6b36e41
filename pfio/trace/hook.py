"""The one small hook through which backends, caches and patches report to the tracer.

Call sites check :data:`ENABLED` first, so a disabled tracer costs one global look-up::

    from pfio.trace import hook
    if hook.ENABLED:
        hook.record_request("s3", "GET", status=206, nbytes=n, seconds=dt, attempts=1)

Filesystem calls (``open``, ``list``, ``stat``, ...) need no call site: every :class:`FS`
subclass announces itself through :func:`fs_class_created`, and the tracer wraps those
methods while it is enabled (and unwraps them when it is disabled), so a disabled tracer
adds nothing to them.

This module imports nothing; the tracer plugs its recorder in when it is enabled.
"""

from __future__ import annotations

import time
import weakref
from types import TracebackType
from typing import Any

#: True while tracing is on; read it before calling any function below.
ENABLED = False

#: the active recorder (a :class:`pfio.trace.recorder.Recorder`) while ENABLED
_recorder: Any = None
#: every FS subclass defined so far (the tracer instruments them when enabled)
fs_classes: weakref.WeakSet[type] = weakref.WeakSet()
#: called with a new FS subclass while tracing is on
_on_new_class: Any = None


def fs_class_created(cls: type) -> None:
    """Called by ``FS.__init_subclass__`` for every filesystem class."""
    fs_classes.add(cls)
    if _on_new_class is not None:
        _on_new_class(cls)


def record_request(scheme: str, method: str, status: int | None = None, nbytes: int = 0,
                   seconds: float = 0.0, attempts: int = 1, error: bool = False,
                   url: str | None = None) -> None:
    """Report one backend request (an S3 GET, PUT, HEAD, LIST, ...) that just ended.

    ``attempts`` above 1 counts as retries, both for the request and for the filesystem
    operation that made it. ``url`` appears in spans only, with credentials and presigned
    query strings removed.
    """
    rec = _recorder
    if rec is not None:
        rec.request(scheme, method, status, nbytes, int(seconds * 1e9), attempts, error, url)


def record_cache(name: str, hit: bool, nbytes: int = 0, seconds: float = 0.0,
                 key: str | None = None) -> None:
    """Report one look-up in cache ``name`` (``hit`` or miss; ``nbytes`` served or fetched)."""
    rec = _recorder
    if rec is not None:
        rec.cache(name, hit, nbytes, int(seconds * 1e9), key)


def record_op(scheme: str, op: str, seconds: float, nbytes: int = 0, error: bool = False,
              path: str | None = None) -> None:
    """Report one operation that just ended, e.g. a patched call's spool time:
    ``record_op("patch", "cv2.imread/spool", dt, nbytes, path=url)``."""
    rec = _recorder
    if rec is not None:
        rec.op(scheme, op, int(seconds * 1e9), nbytes, error, path)


class span:  # noqa: N801 - used like a function: ``with hook.span(...):``
    """Time the ``with`` block as one operation ``op`` of ``scheme`` (an error if it raises).

    ``nbytes`` may be set on the object inside the block::

        with hook.span("patch", "numpy.load", path=url) as s:
            ...
            s.nbytes = size
    """

    __slots__ = ("scheme", "op", "path", "nbytes", "_start")

    def __init__(self, scheme: str, op: str, path: str | None = None, nbytes: int = 0) -> None:
        self.scheme = scheme
        self.op = op
        self.path = path
        self.nbytes = nbytes
        self._start = 0

    def __enter__(self) -> span:
        self._start = time.perf_counter_ns()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        rec = _recorder
        if rec is not None:
            rec.op(self.scheme, self.op, time.perf_counter_ns() - self._start, self.nbytes,
                   exc_type is not None, self.path)
