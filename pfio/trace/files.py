"""Files opened while tracing: their ``read`` and ``write`` calls counted and timed."""

from __future__ import annotations

from time import perf_counter_ns
from types import TracebackType
from typing import Any

from .recorder import Recorder, ThreadState
from .stats import RAW_LIMIT, OpStats


class TracedFile:
    """A file opened while tracing. Its ``read`` and ``write`` calls count as operations
    ``read`` and ``write`` of its filesystem's scheme (in the thread that opened it), and
    the close of a written file (where it is committed or uploaded) as ``close``.
    Everything else is the file's own. Text files count characters, binary files bytes.
    """

    __slots__ = ("_f", "_st", "_scheme", "_rs", "_ws")

    def __init__(self, f: Any, st: ThreadState, scheme: str, reads: Any = None) -> None:
        self._f = f
        self._st = st
        self._scheme = scheme
        self._rs: Any = reads  # an OpStats (None: look it up when needed), or FileTotals
        self._ws: Any = None

    def _stats(self, op: str) -> Any:
        """Where this file's ``op`` calls are counted."""
        return self._st.stats((self._scheme, op))

    def _count(self, stats: Any, start: int, n: int) -> None:
        raw = stats.raw
        raw.append(perf_counter_ns() - start)
        stats.nbytes += n
        if len(raw) >= RAW_LIMIT:
            stats.compact()

    # -- reading -------------------------------------------------------------------------

    def read(self, *args: Any) -> Any:
        start = perf_counter_ns()
        data = self._f.read(*args)
        ns = perf_counter_ns() - start
        stats = self._rs
        if stats is None:
            stats = self._rs = self._stats("read")
        raw = stats.raw
        raw.append(ns)
        if data:
            stats.nbytes += len(data)
        if len(raw) >= RAW_LIMIT:
            stats.compact()
        return data

    def _reading(self) -> Any:
        stats = self._rs
        if stats is None:
            stats = self._rs = self._stats("read")
        return stats

    def read1(self, *args: Any) -> Any:
        start = perf_counter_ns()
        data = self._f.read1(*args)
        self._count(self._reading(), start, len(data))
        return data

    def readline(self, *args: Any) -> Any:
        start = perf_counter_ns()
        data = self._f.readline(*args)
        self._count(self._reading(), start, len(data))
        return data

    def readlines(self, *args: Any) -> Any:
        start = perf_counter_ns()
        lines = self._f.readlines(*args)
        self._count(self._reading(), start, sum(map(len, lines)))
        return lines

    def readinto(self, buffer: Any) -> Any:
        start = perf_counter_ns()
        n = self._f.readinto(buffer)
        self._count(self._reading(), start, n or 0)
        return n

    def readinto1(self, buffer: Any) -> Any:
        start = perf_counter_ns()
        n = self._f.readinto1(buffer)
        self._count(self._reading(), start, n or 0)
        return n

    def __iter__(self) -> TracedFile:
        return self

    def __next__(self) -> Any:
        start = perf_counter_ns()
        line = next(self._f)
        self._count(self._reading(), start, len(line))
        return line

    # -- writing -------------------------------------------------------------------------

    def write(self, data: Any) -> Any:
        start = perf_counter_ns()
        n = self._f.write(data)
        stats = self._ws
        if stats is None:
            stats = self._ws = self._stats("write")
        self._count(stats, start, n if n is not None else len(data))
        return n

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        self._finish(self._f.close)

    def __enter__(self) -> TracedFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Any:
        if self._ws is None:
            return self._f.__exit__(exc_type, exc, tb)
        return self._finish(self._f.__exit__, exc_type, exc, tb)

    def _finish(self, closer: Any, *args: Any) -> Any:
        """Close; time it as ``close`` when something was written."""
        if self._ws is None or self._f.closed:
            return closer(*args)
        start = perf_counter_ns()
        try:
            result = closer(*args)
        except BaseException:
            self._st.stats((self._scheme, "close")).add(perf_counter_ns() - start, error=True)
            raise
        self._st.stats((self._scheme, "close")).add(perf_counter_ns() - start)
        return result

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance() sees the file's class, as without tracing
        return self._f.__class__

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._f!r})"


class FileTotals:
    """The reads (or writes) of one file at the ``"spans"`` level. It stands in for the
    thread's :class:`OpStats` on the hot path (``raw``, ``nbytes``, ``compact``), hands the
    calls on to it in batches and at close, and keeps the file's own totals for its span."""

    __slots__ = ("raw", "nbytes", "count", "ns", "target", "_handed_bytes")

    def __init__(self, target: OpStats) -> None:
        self.raw: list[int] = []
        self.nbytes = self.count = self.ns = self._handed_bytes = 0
        self.target = target

    def compact(self) -> None:
        """Hand the calls counted so far on to the thread's totals."""
        raw, self.raw = self.raw, []
        self.count += len(raw)
        self.ns += sum(raw)
        target = self.target
        target.nbytes += self.nbytes - self._handed_bytes
        self._handed_bytes = self.nbytes
        target.raw.extend(raw)
        if len(target.raw) >= RAW_LIMIT:
            target.compact()


class SpannedFile(TracedFile):
    """A :class:`TracedFile` at the ``"spans"`` level: it also keeps its own totals and
    becomes one span, open to close (or to when it was dropped unclosed), with them."""

    __slots__ = ("_rec", "_path", "_opened", "_done")

    def __init__(self, f: Any, st: ThreadState, scheme: str, rec: Recorder,
                 path: str | None, opened: int) -> None:
        super().__init__(f, st, scheme)
        self._rec = rec
        self._path = path
        self._opened = opened
        self._done = False

    def _stats(self, op: str) -> Any:
        return FileTotals(self._st.stats((self._scheme, op)))

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Any:
        return self._finish(self._f.__exit__, exc_type, exc, tb)

    def _finish(self, closer: Any, *args: Any) -> Any:
        if self._done:
            return closer(*args)
        start = perf_counter_ns()
        error = True
        try:
            result = closer(*args)
            error = False
        finally:
            self._end(perf_counter_ns(), start, error)
        return result

    def __del__(self) -> None:
        if not self._done:
            try:
                now = perf_counter_ns()
                self._end(now, now, False)
            except (TypeError, AttributeError):  # interpreter shutdown: modules torn down
                pass

    def _end(self, end: int, close_start: int, error: bool) -> None:
        self._done = True
        args: dict[str, Any] = {"scheme": self._scheme, "path": self._path}
        for op, totals in (("read", self._rs), ("write", self._ws)):
            if totals is not None:
                totals.compact()
                args[f"{op}s"] = totals.count
                args[f"{op}_bytes"] = totals.nbytes
                args[f"{op}_seconds"] = totals.ns / 1e9
        if self._ws is not None:
            self._rec.op(self._scheme, "close", end - close_start, 0, error, self._path, 0,
                         self._st)
        self._rec.span(self._st, "file", "file", end - self._opened, args, end)
