"""The scheme registry: which filesystem class serves ``scheme://`` URLs.

Built-in schemes are registered by import path so that ``import pfio`` imports no backend.
Third-party packages add schemes without touching pfio, in one of two ways:

* at run time: ``pfio.register_filesystem("myfs", factory)``;
* at install time, with an entry point in the ``pfio.filesystems`` group::

      [project.entry-points."pfio.filesystems"]
      myfs = "mypackage.fs:MyFS"

A factory is any callable ``factory(uri: pfio.URI, **options) -> FS`` returning a filesystem
rooted at ``uri`` (an FS class with a ``from_uri`` classmethod may be registered directly).

Containers (archives opened as filesystems: ``zip``, ``tar``) are registry entries too,
found by kind and loaded by import path, so that the base filesystem module imports none of
them; :func:`register_container` adds a kind and the file name suffixes that name it.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._uri import URI, add_container_suffix, remove_container_suffixes

if TYPE_CHECKING:
    from .fs.base import FS

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "pfio.filesystems"

Factory = Callable[..., "FS"]

_BUILTIN: dict[str, str] = {
    "file": "pfio.fs.local:Local",
    "mem": "pfio.fs.memory:MemoryFS",
    "s3": "pfio.fs.s3:S3",
    "hdfs": "pfio.fs.hdfs:Hdfs",
}

#: serves the schemes pfio has no backend of its own for, through fsspec (loaded lazily)
FSSPEC_FALLBACK = "pfio.fs.fsspec:FsspecFS"

#: the built-in containers: kind -> (import path, suffixes)
_BUILTIN_CONTAINERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "zip": ("pfio.containers.zip:Zip", (".zip",)),
    "tar": ("pfio.containers.tar:Tar", (".tar", ".tar.gz", ".tgz")),
}

#: container kind -> ``factory(fs, path, mode, **options)`` (or its import path)
_containers: dict[str, Callable[..., Any] | str] = {
    kind: path for kind, (path, _) in _BUILTIN_CONTAINERS.items()}

_lock = threading.Lock()
_registered: dict[str, Factory | str] = {}
_resolved: dict[str, Factory] = {}  # scheme -> factory, forgotten on (un)registration
_entry_points_loaded = False


def register_filesystem(scheme: str, factory: Factory | str, *, override: bool = False) -> None:
    """Serve ``scheme://`` URLs with ``factory``.

    Args:
        scheme: the URL scheme, e.g. ``"myfs"``; case-insensitive.
        factory: ``factory(uri, **options) -> FS``, an FS class (its ``from_uri`` is used when it
            has one), or an import path ``"package.module:attribute"`` loaded on first use.
        override: replace an existing registration (built-ins included) instead of raising.

    Raises:
        ValueError: the scheme is already registered and ``override`` is false, or the scheme
            is not a valid URL scheme.
    """
    from ._uri import _SCHEME_RE

    if not isinstance(scheme, str) or not _SCHEME_RE.match(scheme):
        raise ValueError(f"invalid scheme {scheme!r}: use letters, digits, '+', '-' and '.'")
    key = scheme.lower()
    with _lock:
        if not override and (key in _registered or key in _BUILTIN):
            raise ValueError(
                f"scheme {key!r} is already registered; pass override=True to replace it"
            )
        _registered[key] = factory
        _resolved.clear()


def unregister_filesystem(scheme: str) -> None:
    """Remove a scheme added with :func:`register_filesystem` (built-ins come back)."""
    with _lock:
        _registered.pop(scheme.lower(), None)
        _resolved.clear()


def known_schemes() -> list[str]:
    """Every scheme served by pfio's own or registered filesystems, sorted (fsspec serves
    more as a fallback; see :func:`resolve`)."""
    _load_entry_points()
    return sorted(set(_BUILTIN) | set(_registered))


def is_registered(scheme: str) -> bool:
    """True when ``scheme`` (lower case) is served by a built-in or registered filesystem."""
    if scheme in _registered or scheme in _BUILTIN:
        return True
    _load_entry_points()
    return scheme in _registered


def resolve(scheme: str) -> Factory:
    """Return the factory of ``scheme``.

    In order: registered and built-in schemes, entry points of the ``pfio.filesystems``
    group, custom schemes of the INI file (:mod:`pfio.config`), and finally any protocol of
    an installed fsspec (:class:`pfio.fs.fsspec.FsspecFS`).

    Raises:
        ValueError: no filesystem serves ``scheme``; the message lists the known schemes.
    """
    factory = _resolved.get(scheme)
    if factory is not None:
        return factory
    factory = _lookup(scheme)
    if factory is not None:
        _resolved[scheme] = factory
        return factory
    from . import config  # custom schemes of the INI file (PFIO 2.x), which may be reloaded

    factory = config.custom_factory(scheme, _lookup) or _fsspec_fallback(scheme)
    if factory is None:
        raise ValueError(
            f"unknown URL scheme {scheme!r}: known schemes are {', '.join(known_schemes())}; "
            f"register more with pfio.register_filesystem() or the {ENTRY_POINT_GROUP!r} "
            "entry-point group"
        )
    return factory


def _fsspec_fallback(scheme: str) -> Factory | None:
    """A pfio filesystem over fsspec's implementation of ``scheme`` (``gs``, ``https``,
    ``memory``, ...), when fsspec is installed and knows the scheme."""
    try:
        from fsspec.registry import known_implementations, registry
    except ImportError:
        return None
    if scheme not in known_implementations and scheme not in registry:
        return None
    factory: Factory = _import(FSSPEC_FALLBACK).from_uri
    return factory


def _lookup(scheme: str) -> Factory | None:
    """The factory of a built-in, registered or entry-point scheme; None for others."""
    target = _registered.get(scheme) or _BUILTIN.get(scheme)
    if target is None:
        _load_entry_points()
        target = _registered.get(scheme)
    if target is None:
        return None
    found = _import(target) if isinstance(target, str) else target
    factory: Factory = getattr(found, "from_uri", found)
    return factory


def create(uri: URI, **options: Any) -> FS:
    """Create the filesystem rooted at ``uri``."""
    return resolve(uri.scheme)(uri, **options)


def _import(path: str) -> Any:
    """The object an import path ``"package.module:attribute"`` names (the module itself
    without ``:attribute``).

    Always through :func:`importlib.import_module`, never straight from ``sys.modules``:
    a module another thread is still importing is in ``sys.modules`` half initialised, and
    ``import_module`` waits for it (it takes the module's import lock), so that threads
    using a scheme for the first time at once all get the whole module.
    """
    module_name, _, attribute = path.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


def register_container(kind: str, factory: Callable[..., Any] | str,
                       suffixes: tuple[str, ...] = (), *, override: bool = False) -> None:
    """Open archives of ``kind`` with ``factory``.

    Args:
        kind: the container kind, e.g. ``"zip"``.
        factory: ``factory(fs, path, mode="r", **options) -> FS`` opening the archive at
            ``path`` on ``fs`` (an :class:`~pfio.containers.base.ArchiveFS` subclass fits),
            or its import path ``"package.module:attribute"``, loaded on first use.
        suffixes: file name suffixes (``".myar"``) that make a URL path component an archive
            of this kind for :func:`pfio.from_url` and :func:`pfio.open_url`.
        override: replace an existing kind instead of raising.

    Raises:
        ValueError: ``kind`` is registered already and ``override`` is false, or a suffix
            does not start with ``"."``.
    """
    with _lock:
        if kind in _containers and not override:
            raise ValueError(f"container kind {kind!r} is already registered; pass "
                             "override=True to replace it")
        for suffix in suffixes:
            add_container_suffix(suffix, kind)
        _containers[kind] = factory


def unregister_container(kind: str) -> None:
    """Remove the container ``kind`` and its suffixes (a built-in one comes back)."""
    with _lock:
        remove_container_suffixes(kind)
        _containers.pop(kind, None)
        builtin = _BUILTIN_CONTAINERS.get(kind)
        if builtin is not None:
            _containers[kind] = builtin[0]
            for suffix in builtin[1]:
                add_container_suffix(suffix, kind)


def container_factory(kind: str) -> Callable[..., Any]:
    """The factory of the container ``kind`` (imported on first use).

    Raises:
        ValueError: no container of that kind is registered.
    """
    factory = _containers.get(kind)
    if factory is None:
        raise ValueError(f"unknown container kind {kind!r}: known kinds are "
                         f"{', '.join(sorted(_containers))}")
    if isinstance(factory, str):
        loaded: Callable[..., Any] = _import(factory)
        factory = _containers[kind] = loaded
    return factory


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    from importlib.metadata import entry_points

    found = entry_points(group=ENTRY_POINT_GROUP)
    with _lock:
        for ep in found:
            key = ep.name.lower()
            if key in _registered:
                continue
            if key in _BUILTIN:
                logger.warning(
                    "entry point %s=%s ignored: %r is a built-in scheme", ep.name, ep.value, key
                )
                continue
            _registered[key] = ep.value
        _entry_points_loaded = True
