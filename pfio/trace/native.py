"""The tracer's hot path in C: the ``open`` wrapper that builds local files opened ``"rb"``
as :class:`pfio.trace._native.CountedReader` (the extension's).

This module imports only where the extension was built (:mod:`pfio.trace.extension`); the
pure-Python path is :mod:`pfio.trace.files`. The extension's reader counts exactly what
:class:`~pfio.trace.files.CountedReader` counts (``read``, ``read1``, ``readline``,
``readinto``, ``readinto1``), and at the spans level what
:class:`~pfio.trace.files.SpannedReader` counts and keeps (its own totals, its span at
close).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import _native, files, hook

_native.configure(vars(files))  # (RAW_LIMIT, MAX_SPANS, FILE_SPAN: read where Python reads them)

#: the reader of both detail levels (it keeps a span where its open set one up)
CountedReader = _native.CountedReader


def reader_open(fn: Callable[..., Any], slow: Callable[..., Any], op: str, scheme: str,
                os_path: Any, build: Any, spans: bool,
                failed: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (an FS class's ``open``) wrapped for tracing: ``fs.open(path, "rb")`` in a
    thread already traced, not nested, runs in C; every other call goes to ``slow`` (the
    Python wrapper, given the same reader class)."""
    wrapper = _native.ReaderOpen(slow, vars(hook), op, scheme, os_path, build,
                                 CountedReader, failed, spans)
    return functools.wraps(fn)(wrapper)
