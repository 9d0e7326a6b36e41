"""Timing filesystem calls: wrappers installed on every FS class while tracing is on.

:func:`install` replaces ``open``, ``list``, ``stat``, ... on each FS subclass with a timed
wrapper and :func:`uninstall` puts the originals back, so a disabled tracer costs nothing.
Only the outermost call of a thread is counted (``exists`` calling ``stat`` is one
``exists``). Files opened while tracing count their own reads and writes: local files
opened ``"rb"`` are built as :class:`~pfio.trace.files.CountedReader` (an
``io.BufferedReader``), other files come back in a :class:`~pfio.trace.files.TracedFile`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from time import perf_counter_ns
from typing import Any

from . import extension, hook
from .files import CountedReader, SpannedFile, SpannedReader, TracedFile
from .recorder import Recorder, ThreadState
from .stats import RAW_LIMIT

#: the FS methods that are timed
OPERATIONS = ("open", "list", "stat", "isdir", "exists", "glob", "mkdir", "makedirs",
              "remove", "rename")

_MISSING = object()
# (class, method name) -> what the class's own __dict__ held before (or _MISSING)
_installed: dict[tuple[type, str], Any] = {}


def install(classes: Any) -> None:
    """Wrap the operations of every class in ``classes``."""
    for cls in list(classes):
        instrument(cls)


def instrument(cls: type) -> None:
    """Wrap the operations of ``cls`` (the method it resolves to, ours removed)."""
    for name in OPERATIONS:
        if (cls, name) in _installed:
            continue
        original = _resolve(cls, name)
        if original is None:
            continue
        _installed[(cls, name)] = cls.__dict__.get(name, _MISSING)
        _wrap(cls, name, original)


def reinstall() -> None:
    """Wrap ``open`` again where it is wrapped, for the detail level the recorder has now
    (each wrapper replaced by the next in one assignment: no call goes untraced)."""
    for cls, name in list(_installed):
        original = _resolve(cls, name) if name == "open" else None
        if original is not None:
            _wrap(cls, name, original)


def _wrap(cls: type, name: str, original: Callable[..., Any]) -> None:
    wrapper = _WRAPPERS.get(name, _plain)(cls, name, original)
    # a mark on the function object (how a method traced already is recognised)
    wrapper.__pfio_traced__ = True  # type: ignore[attr-defined]
    setattr(cls, name, wrapper)


def uninstall() -> None:
    """Put every original method back."""
    for (cls, name), before in list(_installed.items()):
        if before is _MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, before)
    _installed.clear()


def _resolve(cls: type, name: str) -> Callable[..., Any] | None:
    for klass in cls.__mro__:
        if (klass, name) in _installed:
            before: Callable[..., Any] | None = _installed[(klass, name)]
            if before is not _MISSING:
                return before
            continue
        attr = klass.__dict__.get(name)
        if attr is not None:
            return attr if callable(attr) else None
    return None


def _scheme(fs: Any) -> str:
    """What ``fs`` is counted under: its URL scheme, or for a filesystem without one (an
    archive) its class name: ``zip``."""
    return fs.scheme or type(fs).__name__.lower()


_UNSET: Any = object()  # an argument the caller left out


def _plain(cls: type, op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    # ``path`` is spelled out so that the common call, ``fs.stat(path)``, is passed on
    # without building an argument tuple
    @functools.wraps(fn)
    def traced(self: Any, path: Any = _UNSET, *args: Any, **kwargs: Any) -> Any:
        rec: Recorder | None = hook._recorder
        if rec is None or args or kwargs or path is _UNSET or rec.slow:
            return _other_call(rec, op, fn, self, _pack(path, args), kwargs)[0]
        try:
            st = rec.tls.state
        except AttributeError:
            st = rec.state()
        if st.depth:
            return fn(self, path)
        st.depth = 1
        start = perf_counter_ns()
        try:
            result = fn(self, path)
        except BaseException:
            st.depth = 0
            _failed(rec, st, self, op, start, path)
            raise
        ns = perf_counter_ns() - start
        st.depth = 0
        if rec.spans:
            retries, st.retries = st.retries, 0
            rec.op(_scheme(self), op, ns, 0, False, path, retries, st, fs=self)
        else:
            st.count((self.scheme or _scheme(self), op), ns)
        return result

    return traced


def _local_reader(cls: type, fn: Callable[..., Any]) -> tuple[Any, Any] | None:
    """``(os_path, build)`` where ``fn(fs, path, "rb")`` returns
    ``build(os_path(fs, path))``, an ``io.BufferedReader`` that ``build(..., reader_class)``
    makes as a subclass: the tracer then builds a reader that counts its own reads, with no
    proxy in between (see ``Local.open``). None for other classes."""
    local = getattr(fn, "local_reader", None)
    if local is None or getattr(cls, local[0].__name__, None) is not local[0]:
        return None  # (a subclass mapping paths its own way)
    found: tuple[Any, Any] = local
    return found


def _open(cls: type, op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    local = _local_reader(cls, fn)
    any_open = _any_open(op, fn)
    rec: Recorder | None = hook._recorder
    if local is None or rec is None or rec.slow:  # (torch marks: every call the long way)
        return any_open
    scheme = cls.scheme or cls.__name__.lower()  # type: ignore[attr-defined]  # an FS class  # as _scheme() names the class's instances
    default_mode = inspect.signature(fn).parameters["mode"].default  # "r", as fn's own
    os_path, build = local
    if extension.EXTENSION is None:
        reader_class: type[Any] = SpannedReader if rec.spans else CountedReader
        return _reader_open(op, fn, any_open, scheme, default_mode, os_path, build,
                            reader_class, rec.spans)
    from . import native  # (imports only where the extension was built)

    slow = _reader_open(op, fn, any_open, scheme, default_mode, os_path, build,
                        native.CountedReader, rec.spans)
    # the fast path in C; the other calls to ``slow``
    return native.reader_open(fn, slow, op, scheme, os_path, build, rec.spans, _failed)


def _reader_open(op: str, fn: Callable[..., Any], any_open: Callable[..., Any], scheme: str,
                 default_mode: str, os_path: Any, build: Any, reader_class: type[Any],
                 spans: bool) -> Callable[..., Any]:
    """``open`` for a local file opened "rb": a ``reader_class`` (Python or native) that
    counts its own reads; with ``spans``, one whose span, open to close, is kept when it is
    closed. (The C extension's wrapper takes the common call; this one the rest, or all of
    them where the extension was not built.)"""

    @functools.wraps(fn)
    def traced(self: Any, path: Any, mode: Any = default_mode, *args: Any,
               **kwargs: Any) -> Any:
        rec: Recorder | None = hook._recorder
        if mode != "rb" or args or kwargs or rec is None:
            return any_open(self, path, mode, *args, **kwargs)
        try:
            st = rec.tls.state
        except AttributeError:
            st = rec.state()
        if st.depth:
            return fn(self, path, mode)
        start = perf_counter_ns()
        try:
            name = os_path(self, path)  # also the URL of its span (local files have no scheme)
            f = build(name, reader_class)
        except BaseException:
            _failed(rec, st, self, op, start, path)
            raise
        ns = perf_counter_ns() - start
        try:
            raw, opens, f._rs = st.readers[scheme]
        except KeyError:
            raw, opens, f._rs = st.reader_stats(scheme)
        raw.append(ns)  # no retries to add: building the reader sends no request
        if len(raw) >= RAW_LIMIT:
            opens.compact()
        if spans:
            f._st = st  # (one statement each: a tuple assignment would build a tuple)
            f._scheme = scheme
            f._url = name
            f._opened = start
            f._reads = f._read_bytes = f._read_ns = 0
        return f

    return traced


def _any_open(op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def traced(self: Any, path: Any = _UNSET, mode: Any = _UNSET, *args: Any,
               **kwargs: Any) -> Any:
        rec: Recorder | None = hook._recorder
        if rec is None or args or kwargs or path is _UNSET or rec.slow:
            f, start, where = _other_call(rec, op, fn, self, _pack(path, (mode, *args)),
                                          kwargs)
            if rec is None or start is None:
                return f
            st = rec.state()
            if rec.spans:
                return SpannedFile(f, st, _scheme(self), rec, self, where, start)
            return TracedFile(f, st, _scheme(self))
        try:
            st = rec.tls.state
        except AttributeError:
            st = rec.state()
        if st.depth:
            return fn(self, path) if mode is _UNSET else fn(self, path, mode)
        st.depth = 1
        start = perf_counter_ns()
        try:
            f = fn(self, path) if mode is _UNSET else fn(self, path, mode)
        except BaseException:
            st.depth = 0
            _failed(rec, st, self, op, start, path)
            raise
        ns = perf_counter_ns() - start
        st.depth = 0
        scheme = self.scheme or _scheme(self)
        st.count((scheme, op), ns)
        if rec.spans:  # the file's span, open to close, comes when it is closed
            return SpannedFile(f, st, scheme, rec, self, path, start)
        return TracedFile(f, st, scheme, st.ops.get((scheme, "read")))

    return traced


def _pack(path: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The positional arguments as the caller gave them (``_UNSET`` ones left out)."""
    given = (path, *args)
    while given and given[-1] is _UNSET:
        given = given[:-1]
    return given


def _other_call(rec: Recorder | None, op: str, fn: Callable[..., Any], fs: Any,
                args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, int | None, Any]:
    """The calls off the fast path: tracing off, nested, torch marks wanted, or more
    arguments. Return the result, when the counted call started (None when it was not
    counted) and the path it was called on."""
    if rec is None:
        return fn(fs, *args, **kwargs), None, None
    st = rec.state()
    if st.depth:
        return fn(fs, *args, **kwargs), None, None
    return _call_slow(rec, st, op, fn, fs, args, kwargs)


def _path_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The path a filesystem call was given (its first argument)."""
    return args[0] if args else kwargs.get("path", kwargs.get("src", ""))


def _failed(rec: Recorder, st: ThreadState, fs: Any, op: str, start: int, path: Any) -> None:
    ns = perf_counter_ns() - start
    retries, st.retries = st.retries, 0
    rec.op(_scheme(fs), op, ns, 0, True, path, retries, st, fs=fs)


def _call_slow(rec: Recorder, st: ThreadState, op: str, fn: Callable[..., Any], fs: Any,
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, int, str | None]:
    """Call ``fn`` as a span (and a ``torch.profiler`` mark when asked); return its result,
    when it started and the path it was called on. A file opened without error gets no span
    of its own here: its span, open to close, comes when it is closed."""
    path = _path_argument(args, kwargs)
    mark = rec.record_function(f"pfio.{_scheme(fs)}.{op}") if rec.record_function else None
    if mark is not None:
        mark.__enter__()
    st.depth = 1
    start = perf_counter_ns()
    error = True
    try:
        result = fn(fs, *args, **kwargs)
        error = False
    finally:
        st.depth = 0
        retries, st.retries = st.retries, 0
        rec.op(_scheme(fs), op, perf_counter_ns() - start, 0, error, path, retries, st,
               keep_span=error or op != "open", fs=fs)
        if mark is not None:
            mark.__exit__(None, None, None)
    return result, start, path


def _list(cls: type, op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec: Recorder | None = hook._recorder
        if rec is None or rec.state().depth:
            return fn(self, *args, **kwargs)
        return _timed_listing(rec, _scheme(self), op, fn, self, args, kwargs)

    return traced


def _timed_listing(rec: Recorder, scheme: str, op: str, fn: Callable[..., Any], fs: Any,
                   args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Iterator[Any]:
    """Yield what ``fn`` lists, counting only the time spent inside it (a listing is often
    lazy, and the caller's work between entries is not the filesystem's)."""
    st = rec.state()
    spent = 0
    error = True
    try:
        st.depth = 1
        start = perf_counter_ns()
        try:
            it = iter(fn(fs, *args, **kwargs))
        finally:
            st.depth = 0
            spent += perf_counter_ns() - start
        while True:
            st.depth = 1
            start = perf_counter_ns()
            try:
                item = next(it)
            except StopIteration:
                break
            finally:
                st.depth = 0
                spent += perf_counter_ns() - start
            yield item
        error = False
    except GeneratorExit:  # the caller stopped early: not an error
        error = False
        raise
    finally:
        retries, st.retries = st.retries, 0
        rec.op(scheme, op, spent, 0, error, _path_argument(args, kwargs), retries, st, fs=fs)


# what wraps each operation: factory(class, operation, original method) -> wrapper
_WRAPPERS: dict[str, Callable[[type, str, Callable[..., Any]], Callable[..., Any]]] = {
    "open": _open, "list": _list,
}
