"""Turning the tracer on and off, and reading what it recorded (the ``pfio.trace`` API)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator

from . import chrome, hook, instrument
from .recorder import Recorder, torch_record_function
from .stats import Metrics

logger = logging.getLogger(__name__)

DETAILS = ("metrics", "spans")

_lock = threading.RLock()
#: the recorder of the current (or, once disabled, the last) tracing session
_recorder: Recorder | None = None
_fork_hook_registered = False


def enable(detail: str = "metrics", torch_profiler: bool = False) -> None:
    """Start tracing every pfio filesystem call, file read and write, backend request and
    cache look-up in this process (and in processes it forks).

    Args:
        detail: ``"metrics"`` (the default) keeps counts, bytes, times and latency
            histograms; ``"spans"`` also keeps one span per call for
            :func:`export_chrome_trace`.
        torch_profiler: also mark filesystem calls with ``record_function`` so that they
            appear in ``torch.profiler`` (when torch is imported).

    Enabling while enabled changes the detail level and keeps what was recorded; enabling
    after :func:`disable` starts from zero.

    Raises:
        ValueError: an unknown ``detail``.
    """
    global _recorder, _fork_hook_registered
    if detail not in DETAILS:
        raise ValueError(f"detail must be one of {DETAILS}, not {detail!r}")
    with _lock:
        if hook.ENABLED and _recorder is not None:
            _recorder.spans = detail == "spans"
            if torch_profiler and _recorder.record_function is None:
                _recorder.record_function = torch_record_function()
            instrument.reinstall()
            return
        _recorder = Recorder(spans=detail == "spans", torch_profiler=torch_profiler)
        hook._recorder = _recorder
        instrument.install(hook.fs_classes)
        hook._on_new_class = instrument.instrument
        hook.ENABLED = True
        if not _fork_hook_registered:
            os.register_at_fork(after_in_child=_after_fork_in_child)
            _fork_hook_registered = True
    logger.debug("tracing enabled (%s)", detail)


def disable() -> None:
    """Stop tracing; what was recorded stays readable through :func:`metrics`,
    :func:`summary` and :func:`export_chrome_trace`."""
    with _lock:
        hook.ENABLED = False
        hook._on_new_class = None
        hook._recorder = None
        instrument.uninstall()
    logger.debug("tracing disabled")


def is_enabled() -> bool:
    """True while tracing is on."""
    return hook.ENABLED


@contextlib.contextmanager
def tracing(detail: str = "metrics", torch_profiler: bool = False) -> Iterator[None]:
    """Trace inside the ``with`` block (from zero unless tracing was already on); tracing
    is switched off again at the end unless it was on before."""
    was_on = hook.ENABLED
    enable(detail, torch_profiler)
    try:
        yield
    finally:
        if not was_on:
            disable()


def reset() -> None:
    """Forget everything recorded so far (tracing stays on or off as it is)."""
    global _recorder
    with _lock:
        if _recorder is None:
            return
        _recorder = Recorder(spans=_recorder.spans,
                             torch_profiler=_recorder.record_function is not None)
        if hook.ENABLED:
            hook._recorder = _recorder


def recorder() -> Recorder | None:
    """The recorder of the current or last tracing session (None before the first)."""
    return _recorder


def metrics() -> Metrics:
    """What this process recorded: per ``(scheme, operation)``, per backend
    ``(scheme, method)`` and per cache (see :class:`pfio.trace.stats.Metrics`)."""
    rec = _recorder
    return rec.metrics() if rec is not None else Metrics(processes=[os.getpid()])


def summary() -> str:
    """:func:`metrics` as readable tables."""
    return metrics().summary()


def export_chrome_trace(path: str | os.PathLike[str]) -> None:
    """Write what this process recorded to the local file ``path`` in the Chrome trace
    event format (load it in https://ui.perfetto.dev or chrome://tracing).

    Spans are there when tracing ran with ``detail="spans"``; the file also carries the
    metrics, so ``pfio trace summary`` reads it. Credentials and presigned query strings
    in URLs are removed.
    """
    rec = _recorder or Recorder()
    if not rec.spans:
        logger.info("tracing keeps no spans at the 'metrics' level: the trace has metrics only")
    chrome.write(os.fspath(path), chrome.document(rec))


def _after_fork_in_child() -> None:
    """A forked child counts its own work only."""
    global _recorder
    if _recorder is not None:
        _recorder = Recorder(spans=_recorder.spans,
                             torch_profiler=_recorder.record_function is not None)
        if hook.ENABLED:
            hook._recorder = _recorder
