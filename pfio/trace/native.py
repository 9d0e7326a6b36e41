"""The tracer's hot path in C: the readers of local files opened ``"rb"`` and the ``open``
wrapper that builds them, from the extension :mod:`pfio.trace._native`.

This module imports only where the extension was built (:mod:`pfio.trace.extension`); the
pure-Python path is :mod:`pfio.trace.files`. Its readers
count exactly what :class:`~pfio.trace.files.CountedReader` and
:class:`~pfio.trace.files.SpannedReader` count: ``read`` (and at the spans level ``close``
and ``__exit__``) are C; ``read1``, ``readline``, ``readinto`` are the Python ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import _native, files, hook
from .files import OwnTotals, _Counting

_native.configure(vars(files))  # (RAW_LIMIT, MAX_SPANS, FILE_SPAN: read where Python reads them)


# (typeshed's buffered classes inherit __enter__s that disagree: IOBase's and BinaryIO's)
class CountedReader(_Counting, _native.Reader):  # type: ignore[misc]
    """:class:`pfio.trace.files.CountedReader` with its ``read`` in C."""

    __slots__ = ()

    def _inner(self) -> Any:
        return super(_Counting, self)


class SpannedReader(OwnTotals, CountedReader):  # type: ignore[misc]  # (as CountedReader)
    """:class:`pfio.trace.files.SpannedReader` with ``read``, ``close`` and ``__exit__`` in
    C (the span is kept once, at the first close, or by the finalizer of a reader dropped
    unclosed)."""

    __slots__ = ()
    close = _native.Reader._span_close
    __exit__ = _native.Reader._span_exit


def reader_open(fn: Callable[..., Any], slow: Callable[..., Any], op: str, scheme: str,
                os_path: Any, build: Any, spans: bool,
                failed: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (an FS class's ``open``) wrapped for tracing: ``fs.open(path, "rb")`` in a
    thread already traced, not nested, runs in C; every other call goes to ``slow`` (the
    Python wrapper, given the same reader class)."""
    wrapper = _native.ReaderOpen(slow, vars(hook), op, scheme, os_path, build,
                                 SpannedReader if spans else CountedReader, failed, spans)
    return functools.wraps(fn)(wrapper)
