"""Where the counts and spans of one process go while tracing is on.

Each thread records into its own :class:`ThreadState` (no lock on the hot path); a snapshot
adds the threads up. Spans are kept only at the ``"spans"`` detail level, up to
:data:`MAX_SPANS` per thread (the rest are counted as dropped). A span is a flat tuple of
what its arguments are made of, which become a dict only when a trace is exported (see
:func:`span_args`): a tuple of strings, numbers and None is left alone by the garbage
collector after its first collection, so that a million spans kept cost no collections.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .stats import RAW_LIMIT, CacheStats, Metrics, OpStats

#: spans kept per thread; later ones are dropped (and counted)
MAX_SPANS = 1_000_000

# a span: (category, name, start ns, duration ns, kind, *values): BUILDERS[kind](*values)
# is the dict of its arguments (see span_args)
Span = tuple[Any, ...]
#: the kinds of span: an operation, a file (open to close), a backend request, a cache look-up
OP_SPAN, FILE_SPAN, REQUEST_SPAN, CACHE_SPAN = range(4)


class ThreadState:
    """One thread's counts and spans, and the depth of the filesystem call it is in."""

    __slots__ = ("depth", "retries", "ops", "readers", "requests", "caches", "spans", "dropped",
                 "tid", "name")

    def __init__(self) -> None:
        self.depth = 0
        self.retries = 0
        self.ops: dict[tuple[str, str], OpStats] = {}
        #: scheme -> (raw list of its opens, its opens, its reads) for the tracer's readers
        self.readers: dict[str, tuple[list[int], OpStats, OpStats]] = {}
        self.requests: dict[tuple[str, str], OpStats] = {}
        self.caches: dict[str, CacheStats] = {}
        self.spans: list[Span] = []
        #: spans not kept (beyond MAX_SPANS)
        self.dropped = 0
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
            state: ThreadState = self.tls.state
            return state
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
                      (OP_SPAN, scheme, describe(fs, path), nbytes, error, retries))

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
            self.span(st, "request", f"{scheme.upper()} {method}", ns,
                      (REQUEST_SPAN, scheme, status, nbytes, attempts, url, error))

    def cache(self, name: str, hit: bool, nbytes: int, ns: int, key: str | None) -> None:
        """Count one cache look-up."""
        st = self.state()
        stats = st.caches.get(name)
        if stats is None:
            stats = st.caches[name] = CacheStats()
        stats.add(hit, nbytes, ns)
        if self.spans:
            self.span(st, "cache", "cache hit" if hit else "cache miss", ns,
                      (CACHE_SPAN, name, hit, nbytes, key))

    def span(self, st: ThreadState, category: str, name: str, ns: int,
             args: tuple[Any, ...], end: int | None = None) -> None:
        """Keep one span that ended at ``end`` (default: now) and lasted ``ns``; ``args``
        is ``(kind, *values)`` (see :data:`BUILDERS`)."""
        if len(st.spans) >= MAX_SPANS:
            st.dropped += 1
            return
        stop = time.perf_counter_ns() if end is None else end
        st.spans.append((category, name, stop - ns, ns, *args))

    # -- reading -------------------------------------------------------------------------

    def threads(self) -> list[ThreadState]:
        """The states of every thread that recorded something."""
        with self._lock:
            return list(self._threads)

    @property
    def dropped(self) -> int:
        """Spans not kept, every thread's (each keeps at most :data:`MAX_SPANS`)."""
        return sum(st.dropped for st in self.threads())

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
        named: str | None = path
        return named
    try:
        described: str | None = fs._describe(str(path))
        return described
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


def file_span_args(scheme: str, url: str | None, reads: int | None, read_bytes: int,
                   read_ns: int, writes: int | None, write_bytes: int,
                   write_ns: int) -> dict[str, Any]:
    """The arguments of a file's span: its reads and writes (calls, bytes, nanoseconds),
    calls None where it made none."""
    args: dict[str, Any] = {"scheme": scheme, "path": url}
    if reads is not None:
        args.update(reads=reads, read_bytes=read_bytes, read_seconds=read_ns / 1e9)
    if writes is not None:
        args.update(writes=writes, write_bytes=write_bytes, write_seconds=write_ns / 1e9)
    return args


def request_span_args(scheme: str, status: int | None, nbytes: int, attempts: int,
                      url: str | None, error: bool) -> dict[str, Any]:
    """The arguments of a backend request's span."""
    args: dict[str, Any] = {"scheme": scheme, "status": status, "bytes": nbytes,
                            "attempts": attempts}
    if url is not None:
        args["url"] = url
    if error:
        args["error"] = True
    return args


def cache_span_args(cache: str, hit: bool, nbytes: int, key: str | None) -> dict[str, Any]:
    """The arguments of a cache look-up's span."""
    args: dict[str, Any] = {"cache": cache, "hit": hit, "bytes": nbytes}
    if key is not None:
        args["key"] = key
    return args


#: what builds the arguments of each kind of span, by kind
BUILDERS: tuple[Callable[..., dict[str, Any]], ...] = (
    op_span_args, file_span_args, request_span_args, cache_span_args)


def span_args(span: Span) -> dict[str, Any]:
    """The arguments of ``span`` as a dict."""
    return BUILDERS[span[4]](*span[5:])


def torch_record_function() -> Any:
    """``torch.autograd.profiler.record_function`` when torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch.autograd.profiler.record_function
    except AttributeError:
        return None
