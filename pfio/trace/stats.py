"""Counters and latency histograms: what :func:`pfio.trace.metrics` returns.

Latencies go into a log-linear histogram (16 buckets per power of two, so a percentile is
within about 3 % of the true value). Histograms add up exactly, which lets the parts written
by many processes merge into one summary.
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from dataclasses import dataclass, field
from math import ceil, log2
from typing import Any

from . import extension

_SUB = 16  # buckets per power of two
#: latencies kept raw before they are folded into the histogram
RAW_LIMIT = 4096
_NUMPY_FROM = 64  # fewer durations than this fold faster without NumPy


def fold(hist: dict[int, int], raw: list[int]) -> None:
    """Add durations ``raw`` (nanoseconds; the list may be reordered) to ``hist``: bucket
    ``b`` holds durations ``d`` with ``floor(16 * log2(d + 1)) == b``. Computed in C, with
    NumPy where the process has already imported it (about 25 ns a duration), else by
    sorting the durations and cutting the sorted list at the buckets' first durations (about
    45 ns a duration against 90 for a logarithm each), or by the C extension where it was
    built (a logarithm each, about 10 ns)."""
    native = extension.EXTENSION
    if native is not None and native.fold(hist, raw):
        return
    numpy = sys.modules.get("numpy")
    if numpy is not None and len(raw) >= _NUMPY_FROM:
        buckets = (numpy.log2(numpy.array(raw, dtype=numpy.float64) + 1) * _SUB)
        counts = numpy.bincount(buckets.astype(numpy.int64))
        found = numpy.flatnonzero(counts)
        for index, n in zip(found.tolist(), counts[found].tolist(), strict=True):
            hist[index] = hist.get(index, 0) + n
        return
    values = raw
    values.sort()  # in place: no copy of the list
    i, end = 0, len(values)
    while i < end:
        index = int(log2(values[i] + 1) * _SUB)
        j = bisect_left(values, _bucket_start(index + 1), i)
        hist[index] = hist.get(index, 0) + j - i
        i = j


_starts: dict[int, int] = {}


def _bucket_start(index: int) -> int:
    """The smallest duration of bucket ``index`` or above (by the same float computation as
    :func:`fold`'s, so that both cut where a logarithm each would)."""
    start = _starts.get(index)
    if start is None:
        x = max(1, ceil(2 ** (index / _SUB)))  # the first d + 1 of the bucket, near enough
        while x > 1 and int(log2(x - 1) * _SUB) >= index:
            x -= 1
        while int(log2(x) * _SUB) < index:
            x += 1
        start = _starts[index] = x - 1
    return start


def bucket_value(index: int) -> float:
    """The middle of a histogram bucket, in nanoseconds."""
    return 2 ** ((index + 0.5) / _SUB) - 1


class OpStats:
    """Totals of one kind of operation (or backend request): calls, bytes, time, errors,
    retries, a latency histogram and, for requests, a count per status code.

    A call costs one ``raw.append(ns)`` (plus ``nbytes += n``) on the tracer's hot paths:
    durations wait in ``raw`` until they are folded into the histogram and the totals."""

    __slots__ = ("folded", "folded_ns", "nbytes", "errors", "retries", "hist", "raw",
                 "statuses")

    def __init__(self) -> None:
        self.folded = 0
        self.folded_ns = 0
        self.nbytes = 0
        self.errors = 0
        self.retries = 0
        self.hist: dict[int, int] = {}
        self.raw: list[int] = []
        self.statuses: dict[str, int] = {}

    def add(self, ns: int, nbytes: int = 0, error: bool = False, retries: int = 0) -> None:
        """Count one call that took ``ns`` nanoseconds and moved ``nbytes`` bytes."""
        self.nbytes += nbytes
        if error:
            self.errors += 1
        if retries:
            self.retries += retries
        self.raw.append(ns)
        if len(self.raw) >= RAW_LIMIT:
            self.compact()

    def compact(self) -> None:
        """Fold the raw durations into the histogram and the totals, and empty ``raw`` (in
        place: hot paths may hold on to it)."""
        raw = self.raw
        self.folded += len(raw)
        self.folded_ns += sum(raw)
        fold(self.hist, raw)
        raw.clear()

    @property
    def count(self) -> int:
        """Calls."""
        return self.folded + len(self.raw)

    @property
    def ns(self) -> int:
        """Total time spent, in nanoseconds."""
        return self.folded_ns + sum(self.raw)

    @property
    def bytes(self) -> int:
        """Bytes moved."""
        return self.nbytes

    @property
    def seconds(self) -> float:
        """Total time spent, in seconds."""
        return self.ns / 1e9

    def percentile(self, q: float) -> float:
        """The latency (seconds) below which a fraction ``q`` of the calls finished."""
        self.compact()
        if not self.count:
            return 0.0
        rank = q * self.count
        seen = 0
        for index in sorted(self.hist):
            seen += self.hist[index]
            if seen >= rank:
                return bucket_value(index) / 1e9
        return bucket_value(max(self.hist)) / 1e9

    @property
    def p50(self) -> float:
        """Median latency in seconds."""
        return self.percentile(0.50)

    @property
    def p90(self) -> float:
        """90th percentile latency in seconds."""
        return self.percentile(0.90)

    @property
    def p99(self) -> float:
        """99th percentile latency in seconds."""
        return self.percentile(0.99)

    def merge(self, other: OpStats) -> None:
        """Add ``other``'s totals to these."""
        self.folded += other.folded
        self.folded_ns += other.folded_ns
        self.nbytes += other.nbytes
        self.errors += other.errors
        self.retries += other.retries
        self.raw.extend(list(other.raw))
        if len(self.raw) >= RAW_LIMIT:
            self.compact()
        for index, n in list(other.hist.items()):
            self.hist[index] = self.hist.get(index, 0) + n
        for status, n in list(other.statuses.items()):
            self.statuses[status] = self.statuses.get(status, 0) + n

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (percentiles included; ``hist`` keeps the merge exact)."""
        self.compact()
        return {"count": self.count, "bytes": self.nbytes, "seconds": self.seconds,
                "errors": self.errors, "retries": self.retries, "p50": self.p50,
                "p90": self.p90, "p99": self.p99, "statuses": dict(self.statuses),
                "ns": self.ns, "hist": {str(k): v for k, v in self.hist.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpStats:
        """The inverse of :meth:`to_dict`."""
        stats = cls()
        stats.folded, stats.nbytes = int(data["count"]), int(data["bytes"])
        stats.folded_ns = int(data["ns"])
        stats.errors, stats.retries = int(data["errors"]), int(data["retries"])
        stats.hist = {int(k): int(v) for k, v in data.get("hist", {}).items()}
        stats.statuses = {str(k): int(v) for k, v in data.get("statuses", {}).items()}
        return stats

    def __repr__(self) -> str:
        return (f"OpStats(count={self.count}, bytes={self.nbytes}, seconds={self.seconds:.6f}, "
                f"errors={self.errors}, retries={self.retries})")


class CacheStats:
    """Look-ups of one cache: hits, misses, bytes served from the cache, time spent."""

    __slots__ = ("hits", "misses", "hit_bytes", "miss_bytes", "ns")

    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0
        self.hit_bytes = 0
        self.miss_bytes = 0
        self.ns = 0

    def add(self, hit: bool, nbytes: int, ns: int) -> None:
        """Count one look-up."""
        if hit:
            self.hits += 1
            self.hit_bytes += nbytes
        else:
            self.misses += 1
            self.miss_bytes += nbytes
        self.ns += ns

    @property
    def hit_ratio(self) -> float:
        """Hits over look-ups (0 when there was none)."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def merge(self, other: CacheStats) -> None:
        """Add ``other``'s totals to these."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CacheStats:
        """The inverse of :meth:`to_dict`."""
        stats = cls()
        for name in cls.__slots__:
            setattr(stats, name, int(data.get(name, 0)))
        return stats

    def __repr__(self) -> str:
        return (f"CacheStats(hits={self.hits}, misses={self.misses}, "
                f"hit_bytes={self.hit_bytes})")


@dataclass
class Metrics:
    """What the tracer counted, in one process or merged over many.

    Attributes:
        operations: ``(scheme, operation) -> OpStats``; operations are filesystem calls
            (``open``, ``list``, ``stat``, ...), the ``read``/``write`` calls on files
            opened through pfio, and what patches and integrations report.
        requests: ``(scheme, method) -> OpStats`` for backend requests (S3 ``GET``,
            ``PUT``, ``HEAD``, ``LIST``...), with counts per status code.
        caches: cache name -> :class:`CacheStats`.
        processes: ids of the processes counted.
    """

    operations: dict[tuple[str, str], OpStats] = field(default_factory=dict)
    requests: dict[tuple[str, str], OpStats] = field(default_factory=dict)
    caches: dict[str, CacheStats] = field(default_factory=dict)
    processes: list[int] = field(default_factory=list)

    def merge(self, other: Metrics) -> None:
        """Add ``other`` (another thread's or process's counts) into this."""
        for mine, theirs in ((self.operations, other.operations),
                             (self.requests, other.requests)):
            for key, stats in list(theirs.items()):
                mine.setdefault(key, OpStats()).merge(stats)
        for name, cache in list(other.caches.items()):
            self.caches.setdefault(name, CacheStats()).merge(cache)
        self.processes.extend(p for p in other.processes if p not in self.processes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, read back by :meth:`from_dict`."""
        return {
            "operations": [{"scheme": s, "operation": o, **v.to_dict()}
                           for (s, o), v in sorted(self.operations.items())],
            "requests": [{"scheme": s, "method": m, **v.to_dict()}
                         for (s, m), v in sorted(self.requests.items())],
            "caches": [{"name": n, **v.to_dict()} for n, v in sorted(self.caches.items())],
            "processes": list(self.processes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Metrics:
        """The inverse of :meth:`to_dict`.

        Raises:
            ValueError: ``data`` is not in that form.
        """
        try:
            return cls(
                operations={(d["scheme"], d["operation"]): OpStats.from_dict(d)
                            for d in data.get("operations", [])},
                requests={(d["scheme"], d["method"]): OpStats.from_dict(d)
                          for d in data.get("requests", [])},
                caches={d["name"]: CacheStats.from_dict(d) for d in data.get("caches", [])},
                processes=[int(p) for p in data.get("processes", [])],
            )
        except (KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"not pfio trace metrics: {e!r}") from None

    def summary(self) -> str:
        """These metrics as readable tables (see :func:`pfio.trace.summary`)."""
        from .tables import render

        return render(self)
