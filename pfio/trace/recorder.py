"""Where the counts and spans of one process go while tracing is on.

Each thread records into its own :class:`ThreadState` (no lock on the hot path); a snapshot
adds the threads up. Spans are kept only at the ``"spans"`` detail level, up to
:data:`MAX_SPANS` per thread (the rest are counted as dropped). A span keeps what its
arguments are made of and builds their dict only when a trace is exported, see
:func:`span_args`.
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

# a span: (category, name, start ns, duration ns, args): args are None, a dict, or a
# tuple (function, *values) that builds the dict at export (see span_args)
Span = tuple[str, str, int, int, "dict[str, Any] | tuple[Any, ...] | None"]


class ThreadState:
    """One thread's counts and spans, and the depth of the filesystem call it is in."""

    __slots__ = ("depth", "retries", "ops", "readers", "requests", "caches", "spans", "tid",
                 "name")

    def __init__(self) -> None:
        self.depth = 0
        self.retries = 0
        self.ops: dict[tuple[str, str], OpStats] = {}
        #: scheme -> (raw list of its opens, its opens, its reads) for the tracer's readers
        self.readers: dict[str, tuple[list[int], OpStats, OpStats]] = {}
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

    def reader_stats(self, scheme: str) -> tuple[list[int], OpStats, OpStats]:
        """Where the opens and the reads of ``scheme``'s readers are counted (created at
        the first open, so the reads may count zero calls), the raw durations of the opens
        first (``OpStats.compact`` empties them in place)."""
        found = self.readers.get(scheme)
        if found is None:
            opens = self.stats((scheme, "open"))
            found = self.readers[scheme] = (opens.raw, opens, self.stats((scheme, "read")))
        return found

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
           path: Any = None, retries: int = 0, state: ThreadState | None = None,
           keep_span: bool = True, fs: Any = None) -> None:
        """Count one operation that ended now and took ``ns`` (and keep a span of it, at the
        spans level, unless ``keep_span`` is false). ``path`` is a URL, or with ``fs`` a
        path of that filesystem (its span shows the URL)."""
        st = state or self.state()
        st.stats((scheme, op)).add(ns, nbytes, error, retries)
        if self.spans and keep_span:
            self.span(st, "fs" if scheme != "patch" else "patch", op, ns,
                      (op_span_args, scheme, describe(fs, path), nbytes, error, retries))

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
            operations = {key: stats for key, stats in list(st.ops.items()) if stats.count}
            total.merge(Metrics(operations=operations, requests=dict(st.requests),
                                caches=dict(st.caches)))
        return total

    def wall_us(self, perf_ns: int) -> float:
        """A perf-counter time as microseconds since the epoch (Chrome trace ``ts``)."""
        wall0, perf0 = self.clock
        return (wall0 + perf_ns - perf0) / 1000


def describe(fs: Any, path: Any) -> str | None:
    """``fs``'s ``path`` as a URL (``path`` itself without ``fs``). Spans keep this string,
    not the filesystem: a trace must not keep filesystems (and the files of archives) open."""
    if path is None or fs is None:
        return path
    try:
        return fs._describe(str(path))
    except Exception:  # noqa: BLE001 - a name for a span is never worth an error
        return str(path)


def op_span_args(scheme: str, url: str | None, nbytes: int, error: bool,
                 retries: int) -> dict[str, Any]:
    """The arguments of an operation's span."""
    args: dict[str, Any] = {"scheme": scheme}
    if url is not None:
        args["path"] = url
    if nbytes:
        args["bytes"] = nbytes
    if error:
        args["error"] = True
    if retries:
        args["retries"] = retries
    return args


def file_span_args(scheme: str, url: str | None, reads: tuple[int, int, int] | None,
                   writes: tuple[int, int, int] | None) -> dict[str, Any]:
    """The arguments of a file's span: its reads and writes as (calls, bytes, nanoseconds),
    None where it made none."""
    args: dict[str, Any] = {"scheme": scheme, "path": url}
    for op, totals in (("read", reads), ("write", writes)):
        if totals is not None:
            calls, nbytes, ns = totals
            args[f"{op}s"] = calls
            args[f"{op}_bytes"] = nbytes
            args[f"{op}_seconds"] = ns / 1e9
    return args


def span_args(args: dict[str, Any] | tuple[Any, ...] | None) -> dict[str, Any] | None:
    """A span's arguments as a dict (built now if the span kept what they are made of)."""
    if type(args) is tuple:
        return args[0](*args[1:])
    return args  # type: ignore[return-value]


def torch_record_function() -> Any:
    """``torch.autograd.profiler.record_function`` when torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch.autograd.profiler.record_function
    except AttributeError:
        return None
