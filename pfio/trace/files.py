"""Files opened while tracing: their ``read`` and ``write`` calls counted and timed.

A file comes back in one of two forms:

- a local file opened ``"rb"`` by :class:`~pfio.fs.local.Local` is a :class:`CountedReader`,
  an ``io.BufferedReader`` that counts its own reads (``with``, ``close``, ``seek`` and the
  rest stay in C, so tracing it costs little more than the timing itself);
- any other file comes back behind a :class:`TracedFile` proxy.

At the ``"spans"`` level each file also keeps its own totals and becomes one span, from open
to close (or to when it was dropped unclosed): :class:`SpannedReader` and
:class:`SpannedFile`.
"""

from __future__ import annotations

import io
from time import perf_counter_ns
from types import TracebackType
from typing import Any

from .recorder import FILE_SPAN, MAX_SPANS, Recorder, ThreadState, describe
from .stats import RAW_LIMIT, OpStats

_buffered_read = io.BufferedReader.read
_buffered_close = io.BufferedReader.close


def _tally(stats: Any, ns: int, n: int) -> None:
    """Count one call that took ``ns`` and moved ``n`` bytes in ``stats`` (an OpStats or a
    FileTotals)."""
    raw = stats.raw
    raw.append(ns)
    stats.nbytes += n
    if len(raw) >= RAW_LIMIT:
        stats.compact()


class _Counting:
    """What both forms of a traced file share: where their calls are counted, and the
    counted calls other than the hot ``read``. ``_inner()`` is what they are handed to."""

    __slots__ = ()
    _st: ThreadState
    _scheme: str
    # where the reads are counted: the thread's OpStats (a TracedFile looks it up at its
    # first read), or a FileTotals (a SpannedFile)
    _rs: Any

    def _inner(self) -> Any:
        raise NotImplementedError

    def _stats(self, op: str) -> Any:
        """Where this file's ``op`` calls are counted."""
        return self._st.stats((self._scheme, op))

    def _reading(self) -> Any:
        stats = self._rs
        if stats is None:
            stats = self._rs = self._stats("read")
        return stats

    def _count(self, stats: Any, start: int, n: int) -> None:
        _tally(stats, perf_counter_ns() - start, n)

    def read1(self, *args: Any) -> Any:
        start = perf_counter_ns()
        data = self._inner().read1(*args)
        self._count(self._reading(), start, len(data))
        return data

    def readline(self, *args: Any) -> Any:
        start = perf_counter_ns()
        data = self._inner().readline(*args)
        self._count(self._reading(), start, len(data))
        return data

    def readinto(self, buffer: Any) -> Any:
        start = perf_counter_ns()
        n = self._inner().readinto(buffer)
        self._count(self._reading(), start, n or 0)
        return n

    def readinto1(self, buffer: Any) -> Any:
        start = perf_counter_ns()
        n = self._inner().readinto1(buffer)
        self._count(self._reading(), start, n or 0)
        return n


# (typeshed's buffered classes inherit __enter__s that disagree: IOBase's and BinaryIO's)
class CountedReader(_Counting, io.BufferedReader):  # type: ignore[misc]
    """A local file opened ``"rb"`` while tracing: an ``io.BufferedReader`` whose reads count
    as operation ``read`` of its scheme. Iterating calls ``readline``, which counts."""

    __slots__ = ("_rs",)  # set by whoever builds it, never None

    def _inner(self) -> Any:
        return super(_Counting, self)

    def read(self, size: int | None = -1) -> bytes:
        start = perf_counter_ns()
        data = _buffered_read(self, size)
        ns = perf_counter_ns() - start
        stats = self._rs  # _tally(), inlined: this is the hottest read of all
        raw = stats.raw
        raw.append(ns)
        stats.nbytes += len(data)
        if len(raw) >= RAW_LIMIT:
            stats.compact()
        return data


class TracedFile(_Counting):
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

    def _inner(self) -> Any:
        return self._f

    # -- reading -------------------------------------------------------------------------

    def read(self, *args: Any) -> Any:
        start = perf_counter_ns()
        data = self._f.read(*args)
        self._count(self._reading(), start, len(data) if data else 0)
        return data

    def readlines(self, *args: Any) -> Any:
        start = perf_counter_ns()
        lines = self._f.readlines(*args)
        self._count(self._reading(), start, sum(map(len, lines)))
        return lines

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

    # (a property over __class__: mypy refuses redefining it, Python allows it)
    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance() sees the file's class, as without tracing
        cls: type = self._f.__class__
        return cls

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._f!r})"


class FileTotals:
    """The reads (or writes) of one :class:`SpannedFile`. It stands in for the
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


class SpannedReader(CountedReader):
    """A :class:`CountedReader` at the ``"spans"`` level: it also keeps its own totals and
    becomes one span, from open to close (``with``, ``close()``, or the finalizer of a
    reader dropped unclosed). ``_opened`` is None once its span is kept."""

    __slots__ = ("_st", "_scheme", "_url", "_opened", "_reads", "_read_bytes", "_read_ns")
    _url: str
    _opened: int | None
    _reads: int
    _read_bytes: int
    _read_ns: int

    def read(self, size: int | None = -1) -> bytes:
        start = perf_counter_ns()
        data = _buffered_read(self, size)
        ns = perf_counter_ns() - start
        n = len(data)
        self._reads += 1  # _count(), inlined: one Python call a read, as CountedReader's
        self._read_bytes += n
        self._read_ns += ns
        stats = self._rs
        raw = stats.raw
        raw.append(ns)
        stats.nbytes += n
        if len(raw) >= RAW_LIMIT:
            stats.compact()
        return data

    def _count(self, stats: Any, start: int, n: int) -> None:
        ns = perf_counter_ns() - start
        self._reads += 1
        self._read_bytes += n
        self._read_ns += ns
        _tally(stats, ns, n)

    def close(self) -> None:
        self.__exit__(None, None, None)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # close() itself, here: ``with`` (the hot path) then costs one Python call
        opened = self._opened
        if opened is None:
            return _buffered_close(self)
        self._opened = None
        try:
            _buffered_close(self)
        finally:
            try:  # Recorder.span(), inlined: a span from open to now
                end = perf_counter_ns()
                st = self._st
                spans = st.spans
                if len(spans) < MAX_SPANS:
                    spans.append(("file", "file", opened, end - opened, FILE_SPAN,
                                  self._scheme, self._url, self._reads, self._read_bytes,
                                  self._read_ns, None, 0, 0))
                else:
                    st.dropped += 1
            except (TypeError, AttributeError):  # interpreter shutdown: modules torn down
                pass


class SpannedFile(TracedFile):
    """A :class:`TracedFile` at the ``"spans"`` level: it also keeps its own totals and
    becomes one span, from open to close (or to when it was dropped unclosed)."""

    __slots__ = ("_rec", "_url", "_opened", "_done")

    def __init__(self, f: Any, st: ThreadState, scheme: str, rec: Recorder, fs: Any,
                 path: Any, opened: int) -> None:
        super().__init__(f, st, scheme)
        self._rec = rec
        self._url = describe(fs, path)
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
        totals: list[Any] = []
        for stats in (self._rs, self._ws):
            if stats is not None:
                stats.compact()
                totals += (stats.count, stats.nbytes, stats.ns)
            else:
                totals += (None, 0, 0)
        if self._ws is not None:
            self._rec.op(self._scheme, "close", end - close_start, 0, error, self._url, 0,
                         self._st)
        self._rec.span(self._st, "file", "file", end - self._opened,
                       (FILE_SPAN, self._scheme, self._url, *totals), end)
