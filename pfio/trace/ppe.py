"""PFIO 2.x's ``trace=True``: calls recorded in pytorch-pfn-extras' profiler.

PFIO 2.x code passes ``trace=True`` to a filesystem (``Local(trace=True)``,
``from_url(url, trace=True)``) or to a cache (``FileCache(..., trace=True)``), and finds its
calls in ``ppe.profiler`` under PFIO 2.x's names: ``pfio.v2.Local:open``,
``pfio.v2.Local:read``, ``pfio.v2.Zip:create-zipfile-obj``, ``pfio.cache.file:put``, ... This
module gives those objects that behaviour and nothing else: :mod:`pfio.trace` keeps
counting everything whether or not an object asked for ``trace=True``.

How: a class that PFIO 2.x traced derives from :class:`Profilable`. Made with
``trace=True``, its instance belongs to a subclass (made once per class, with the same name)
whose listed methods run inside ``ppe.profiler.record``; the files its ``open`` returns are
wrapped so that their methods are recorded too, and its listings are recorded per entry
(``pfio.v2.Zip:list-0``, ``-1``, ...), as PFIO 2.x recorded them. Objects made without
``trace=True`` are of the plain class: they pay nothing. Profiled objects pickle (to
DataLoader workers) as profiled objects.

Without pytorch-pfn-extras installed, recording does nothing (as in PFIO 2.x).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any, ClassVar

logger = logging.getLogger(__name__)

#: how an operation is named after the class's prefix: a fixed tag, or a function of the
#: call's arguments
Tag = str | Callable[..., str]

_ppe: Any = None  # pytorch_pfn_extras.profiler once imported; False when it is missing
_classes: dict[type, type] = {}
_lock = threading.Lock()


def _profiler() -> Any:
    """``pytorch_pfn_extras.profiler``, or None where it is not installed."""
    global _ppe
    if _ppe is None:
        try:
            from pytorch_pfn_extras import profiler
        except ImportError:
            logger.debug("pytorch-pfn-extras is not installed: trace=True records nothing")
            _ppe = False
        else:
            _ppe = profiler
    return _ppe or None


def record(tag: str) -> contextlib.AbstractContextManager[Any]:
    """The ``with`` block recorded as ``tag`` in ``ppe.profiler`` (nothing without
    pytorch-pfn-extras)."""
    profiler = _profiler()
    if profiler is None:
        return contextlib.nullcontext()
    recorded: contextlib.AbstractContextManager[Any] = profiler.record(tag, trace=True)
    return recorded


def record_iterable(tag: str, items: Iterable[Any]) -> Iterator[Any]:
    """``items``, each step recorded as ``tag-0``, ``tag-1``, ... (as
    ``ppe.profiler.record_iterable`` names them)."""
    profiler = _profiler()
    if profiler is None:
        return iter(items)
    return iter(profiler.record_iterable(tag, items, trace=True))


#: methods PFIO 2.x's files did not have, recorded under the name of what they do
_FILE_ALIASES = {"read_at": "read", "read_tail": "read"}


class ProfiledCalls:
    """``target`` whose method calls are recorded as ``<prefix>:<method>`` (``aliases``
    renames methods: ``{"get": "get_object"}``); its other attributes are its own."""

    def __init__(self, target: Any, prefix: str, aliases: dict[str, str] | None = None) -> None:
        self._target = target
        self._prefix = prefix
        self._aliases = aliases or {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr
        method = getattr(attr, "__name__", name)
        tag = f"{self._prefix}:{self._aliases.get(method, method)}"

        @functools.wraps(attr)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            with record(tag):
                return attr(*args, **kwargs)

        return recorded

    def __repr__(self) -> str:
        return f"<profiled {self._target!r}>"


class ProfiledFile(ProfiledCalls):
    """A file whose method calls are recorded as ``<prefix>:<method>`` (``read``,
    ``write``, ``close``, ...) and whose ``with`` block's end as ``<prefix>:exit-context``,
    as PFIO 2.x's traced files were; positional reads (``read_at``, ``read_tail``, which an
    archive reads its backing file with) count as ``read``. Other attributes are the file's
    own."""

    def __init__(self, file: Any, prefix: str) -> None:
        super().__init__(file, prefix, _FILE_ALIASES)

    def __enter__(self) -> ProfiledFile:
        self._target.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Any:
        with record(f"{self._prefix}:exit-context"):
            return self._target.__exit__(exc_type, exc, tb)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._target)


class Profilable:
    """Base of the classes whose objects PFIO 2.x code makes with ``trace=True``.

    Subclasses name what is recorded: :attr:`_ppe_prefix` (the part before ``:``),
    :attr:`_ppe_operations` (method name -> tag), :attr:`_ppe_files` (methods returning a
    file to record) and :attr:`_ppe_listings` (methods returning an iterable recorded per
    item).
    """

    _ppe_prefix: ClassVar[str | None] = None
    _ppe_operations: ClassVar[dict[str, Tag]] = {}
    _ppe_files: ClassVar[frozenset[str]] = frozenset()
    _ppe_listings: ClassVar[frozenset[str]] = frozenset()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("trace") and cls._ppe_tag_prefix() is not None:
            cls = profiled_class(cls)
        return super().__new__(cls)

    @classmethod
    def _ppe_tag_prefix(cls) -> str | None:
        """What this class's tags start with (None: ``trace=True`` records nothing)."""
        return cls._ppe_prefix


def is_profiled(obj: object) -> bool:
    """True when ``obj`` was made with ``trace=True``: a backend records its own inner
    steps only for such objects (S3 its requests, ``pfio.boto3:get_object``, ...: see
    :class:`ProfiledCalls`)."""
    return "_ppe_base" in type(obj).__dict__


def profiled_class(cls: type[Profilable]) -> type:
    """The subclass of ``cls`` whose listed methods are recorded (made once per class; it
    has ``cls``'s name, module and documentation)."""
    base = cls.__dict__.get("_ppe_base")
    if base is not None:  # profiled already
        return cls
    with _lock:
        sub = _classes.get(cls)
        if sub is None:
            prefix = cls._ppe_tag_prefix()
            assert prefix is not None
            namespace: dict[str, Any] = {
                "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                "__doc__": cls.__doc__, "_ppe_base": cls, "__reduce_ex__": _reduce_ex,
            }
            for name, tag in cls._ppe_operations.items():
                if hasattr(cls, name):
                    namespace[name] = _recorded(cls, name, prefix, tag)
            metaclass: Any = type(cls)
            sub = _classes[cls] = metaclass(cls.__name__, (cls,), namespace)
    return sub


def _recorded(cls: type[Profilable], name: str, prefix: str, tag: Tag) -> Callable[..., Any]:
    """``cls``'s method ``name`` (looked up at each call, so that other wrappers of it are
    honoured), recorded."""
    original = getattr(cls, name)
    is_file, is_listing = name in cls._ppe_files, name in cls._ppe_listings

    @functools.wraps(original)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        full = f"{prefix}:{tag if isinstance(tag, str) else tag(*args, **kwargs)}"
        if is_listing:
            return record_iterable(full, getattr(cls, name)(self, *args, **kwargs))
        with record(full):
            result = getattr(cls, name)(self, *args, **kwargs)
        return ProfiledFile(result, prefix) if is_file else result

    return method


def _reduce_ex(self: Any, protocol: Any) -> tuple[Any, ...]:
    """Pickle a profiled object as its plain class and state; it is profiled again when
    unpickled."""
    getstate = getattr(self, "__getstate__", None)
    state = getstate() if getstate is not None else self.__dict__
    return _rebuild, (type(self)._ppe_base, state)


def _rebuild(base: type[Profilable], state: Any) -> Any:
    obj: Any = object.__new__(profiled_class(base))
    if state is not None:
        setstate = getattr(obj, "__setstate__", None)
        if setstate is not None:
            setstate(state)
        else:
            obj.__dict__.update(state)
    return obj


__all__ = ["Profilable", "ProfiledCalls", "ProfiledFile", "is_profiled", "profiled_class",
           "record", "record_iterable"]
