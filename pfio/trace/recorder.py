"""Where the counts and spans of one process go while tracing is on.

Each thread records into its own :class:`ThreadState` (no lock on the hot path); a snapshot
adds the threads up. Spans are kept only at the ``"spans"`` detail level, up to
:data:`MAX_SPANS` per thread (the rest are counted as dropped).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from .stats import RAW_LIMIT, CacheStats, Metrics, OpStats

#: spans kept per thread; later ones are dropped (and counted)
MAX_SPANS = 1_000_000

# a span: (category, name, start ns, duration ns, args or None)
Span = tuple[str, str, int, int, "dict[str, Any] | None"]


class ThreadState:
    """One thread's counts and spans, and the depth of the filesystem call it is in."""

    __slots__ = ("depth", "retries", "ops", "requests", "caches", "spans", "tid", "name")

    def __init__(self) -> None:
        self.depth = 0
        self.retries = 0
        self.ops: dict[tuple[str, str], OpStats] = {}
        self.requests: dict[tuple[str, str], OpStats] = {}
        self.caches: dict[str, CacheStats] = {}
        self.spans: list[Span] = []
        self.tid = threading.get_native_id()
        self.name = threading.current_thread().name

    def stats(self, key: tuple[str, str]) -> OpStats:
        """The totals of operation ``key`` in this thread."""
        stats = self.ops.get(key)
        if stats is None:
            stats = self.ops[key] = OpStats()
        return stats

    def count(self, key: tuple[str, str], ns: int) -> None:
        """Count one successful call of ``key`` that took ``ns`` (the hot path); retries
        reported meanwhile by backend requests go to it."""
        stats = self.ops.get(key)
        if stats is None:
            stats = self.ops[key] = OpStats()
        raw = stats.raw
        raw.append(ns)
        if self.retries:
            stats.retries += self.retries
            self.retries = 0
        if len(raw) >= RAW_LIMIT:
            stats.compact()


class Recorder:
    """The tracer of one process.

    Args:
        spans: keep spans (for :func:`pfio.trace.export_chrome_trace`), not only counts.
        torch_profiler: also show filesystem calls in ``torch.profiler`` (when torch is
            imported).
    """

    def __init__(self, spans: bool = False, torch_profiler: bool = False) -> None:
        #: spans are kept, not only counts
        self.spans = spans
        #: torch.profiler marks are wanted: the filesystem wrappers take the long way
        self.slow = False
        self.record_function = torch_record_function() if torch_profiler else None
        self.pid = os.getpid()
        self.dropped = 0
        #: (wall clock ns, perf counter ns) at the start: spans are placed on the wall clock
        self.clock = (time.time_ns(), time.perf_counter_ns())
        self.tls = threading.local()
        self._threads: list[ThreadState] = []
        self._lock = threading.Lock()

    @property
    def record_function(self) -> Any:
        """``torch.autograd.profiler.record_function`` when calls are shown in
        ``torch.profiler``, else None."""
        return self._record_function

    @record_function.setter
    def record_function(self, value: Any) -> None:
        self._record_function = value
        self.slow = value is not None

    def state(self) -> ThreadState:
        """The calling thread's state."""
        try:
            return self.tls.state
        except AttributeError:
            state = self.tls.state = ThreadState()
            with self._lock:
                self._threads.append(state)
            return state

    # -- recording -----------------------------------------------------------------------

    def op(self, scheme: str, op: str, ns: int, nbytes: int = 0, error: bool = False,
           path: str | None = None, retries: int = 0, state: ThreadState | None = None,
           keep_span: bool = True) -> None:
        """Count one operation that ended now and took ``ns`` (and keep a span of it, at the
        spans level, unless ``keep_span`` is false)."""
        st = state or self.state()
        st.stats((scheme, op)).add(ns, nbytes, error, retries)
        if self.spans and keep_span:
            args: dict[str, Any] = {"scheme": scheme}
            if path is not None:
                args["path"] = path
            if nbytes:
                args["bytes"] = nbytes
            if error:
                args["error"] = True
            if retries:
                args["retries"] = retries
            self.span(st, "fs" if scheme != "patch" else "patch", op, ns, args)

    def request(self, scheme: str, method: str, status: int | None, nbytes: int, ns: int,
                attempts: int, error: bool, url: str | None) -> None:
        """Count one backend request; its retries also go to the filesystem call it is in."""
        st = self.state()
        key = (scheme, method)
        stats = st.requests.get(key)
        if stats is None:
            stats = st.requests[key] = OpStats()
        retries = max(attempts - 1, 0)
        stats.add(ns, nbytes, error, retries)
        code = str(status) if status is not None else "none"
        stats.statuses[code] = stats.statuses.get(code, 0) + 1
        if st.depth:
            st.retries += retries
        if self.spans:
            args = {"scheme": scheme, "status": status, "bytes": nbytes, "attempts": attempts}
            if url is not None:
                args["url"] = url
            if error:
                args["error"] = True
            self.span(st, "request", f"{scheme.upper()} {method}", ns, args)

    def cache(self, name: str, hit: bool, nbytes: int, ns: int, key: str | None) -> None:
        """Count one cache look-up."""
        st = self.state()
        stats = st.caches.get(name)
        if stats is None:
            stats = st.caches[name] = CacheStats()
        stats.add(hit, nbytes, ns)
        if self.spans:
            args: dict[str, Any] = {"cache": name, "hit": hit, "bytes": nbytes}
            if key is not None:
                args["key"] = key
            self.span(st, "cache", f"cache {'hit' if hit else 'miss'}", ns, args)

    def span(self, st: ThreadState, category: str, name: str, ns: int,
             args: dict[str, Any] | None, end: int | None = None) -> None:
        """Keep one span that ended at ``end`` (default: now) and lasted ``ns``."""
        if len(st.spans) >= MAX_SPANS:
            self.dropped += 1
            return
        stop = time.perf_counter_ns() if end is None else end
        st.spans.append((category, name, stop - ns, ns, args))

    # -- reading -------------------------------------------------------------------------

    def threads(self) -> list[ThreadState]:
        """The states of every thread that recorded something."""
        with self._lock:
            return list(self._threads)

    def metrics(self) -> Metrics:
        """The counts of every thread added up."""
        total = Metrics(processes=[self.pid])
        for st in self.threads():
            total.merge(Metrics(operations=dict(st.ops), requests=dict(st.requests),
                                caches=dict(st.caches)))
        return total

    def wall_us(self, perf_ns: int) -> float:
        """A perf-counter time as microseconds since the epoch (Chrome trace ``ts``)."""
        wall0, perf0 = self.clock
        return (wall0 + perf_ns - perf0) / 1000


def torch_record_function() -> Any:
    """``torch.autograd.profiler.record_function`` when torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch.autograd.profiler.record_function
    except AttributeError:
        return None
