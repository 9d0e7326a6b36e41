"""``pfio.v2.fs``: the base classes and the factory functions, with PFIO 2.x's semantics.

:class:`FS` and :class:`FileStat` are pfio's own; :func:`from_url` adds PFIO 2.x's
``force_type`` and ``http_cache`` arguments to :func:`pfio.from_url`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import IO, Any

from .. import registry
from .._uri import container_kind, parse_uri
from ..api import from_url as _from_url
from ..api import open_url as _open_url
from ..containers.base import ArchiveFS
from ..errors import os_error_args
from ..fs.base import FS
from ..fs.stat import FileStat
from ..version import __version__
from . import config

_ARCHIVE_TYPES = ("zip", "tar")


class ForkedError(RuntimeError):
    """PFIO 2.x's error for a filesystem used in a forked child. pfio never raises it: its
    filesystems reconnect after ``fork`` by themselves. Kept so that ``except`` clauses
    naming it still work."""


class RootNotFoundError(FileNotFoundError, ValueError):
    """:func:`from_url`'s root does not exist: a ``FileNotFoundError`` (pfio) that is also
    the ``ValueError`` PFIO 2.x raised."""


class RootNotADirectoryError(NotADirectoryError, ValueError):
    """:func:`from_url`'s root is a file (``force_type`` forbids opening it as an archive):
    a ``NotADirectoryError`` (pfio) that is also the ``ValueError`` PFIO 2.x raised."""


def from_url(url: str, *, force_type: str | None = None, create: bool = False,
             http_cache: str | None = None, **options: Any) -> FS:
    """Return the filesystem at ``url``, as PFIO 2.x's ``from_url`` did.

    Without ``force_type`` this is :func:`pfio.from_url`: a path component ending in
    ``.zip`` (or ``.tar``, ``.tar.gz``, ``.tgz``) is opened as an archive.

    Args:
        url: where the filesystem is rooted.
        force_type: ``"zip"`` (or ``"tar"``) opens the file at ``url`` as that kind of
            archive whatever its name; a scheme name (``"file"``, ``"s3"``, ``"hdfs"``, ...)
            opens ``url`` as a directory of that filesystem even when its name ends in
            ``.zip``, and must be the scheme of ``url``.
        create: create the root directory when it is missing (not for archives).
        http_cache: the URL prefix of an HTTP cache server to read files through (see
            :class:`pfio.v2.HTTPCachedFS`).
        options: backend options. ``reset_on_fork`` is accepted with a
            ``DeprecationWarning`` (filesystems always reconnect after ``fork``).
            ``mode="w"`` creates the archive ``url`` names (by ``force_type`` or by its
            suffix), as PFIO 2.x's ``Zip(mode="w")``; elsewhere ``mode`` is ignored, as in
            PFIO 2.x. An archive keeps the options in ``kwargs`` (PFIO 2.x's attribute),
            and ``buffering`` reaches its backing file's ``open`` through the filesystem
            holding it (``buffering=0``: the raw file, as in PFIO 2.x).

    Raises:
        RootNotFoundError: the root directory does not exist (and ``create`` is false).
        RootNotADirectoryError: the root is a file.
        ValueError: ``force_type`` is a scheme other than that of ``url``, or ``create`` is
            asked of an archive; also as :func:`pfio.from_url`.
    """
    if options.pop("reset_on_fork", None) is not None:
        warnings.warn("reset_on_fork is deprecated: filesystems reconnect after fork by "
                      "themselves", DeprecationWarning, stacklevel=2)
    mode = options.pop("mode", None)
    if mode not in (None, "r") and force_type is None:
        kind = container_kind(parse_uri(url).split()[1])
        force_type = kind if kind in _ARCHIVE_TYPES else None  # a new archive, by its name
    try:
        fs = _forced(url, force_type, create, options, mode or "r")
    except NotADirectoryError as exc:
        raise RootNotADirectoryError(*os_error_args(exc)) from exc
    except FileNotFoundError as exc:
        raise RootNotFoundError(*os_error_args(exc)) from exc
    if isinstance(fs, ArchiveFS):
        fs.kwargs = {name: value for name, value in options.items() if name != "trace"}
    if http_cache is not None:
        from ..cache.http_cached_fs import HTTPCachedFS

        fs = HTTPCachedFS(http_cache, fs)
    return fs


def open_url(url: str, mode: str = "r", *, force_type: str | None = None,
             http_cache: str | None = None, **kwargs: Any) -> IO[Any]:
    """Open the file at ``url``, as PFIO 2.x's ``open_url`` did.

    Without ``force_type`` and ``http_cache`` this is :func:`pfio.open_url`; with them, the
    directory of ``url`` is opened by :func:`from_url` with them and the file in it is
    opened (so ``force_type="zip"`` takes that directory for a zip file, as PFIO 2.x).

    Raises:
        ValueError: ``force_type`` is a scheme other than that of ``url``; also as
            :func:`pfio.open_url`.
    """
    if force_type is None and http_cache is None:
        return _open_url(url, mode, **kwargs)
    parent, name = parse_uri(url).split()
    fs = from_url(str(parent), force_type=force_type, http_cache=http_cache)
    try:
        return fs.open(name, mode, **kwargs)
    finally:
        if isinstance(fs, ArchiveFS):
            fs.close()  # it releases its backing file once the member is closed


def _forced(url: str, force_type: str | None, create: bool, options: dict[str, Any],
            mode: str = "r") -> FS:
    if force_type is None:
        return _from_url(url, create=create, **options)
    if not isinstance(force_type, str):
        raise ValueError(f"force_type must be a str, not {type(force_type).__name__}")
    uri = parse_uri(url)
    if force_type in _ARCHIVE_TYPES:
        if create:
            raise ValueError(f"create=True is not supported when opening {url!r} as a "
                             f"{force_type} archive")
        parent, name = uri.split()
        if not name:
            raise ValueError(f"{url!r} names no file to open as a {force_type} archive")
        outer = _from_url(str(parent), **options)
        archive_options = {"trace": True} if options.get("trace") else {}
        opener = outer.open_zip if force_type == "zip" else outer.open_tar
        archive = opener(name, mode, **archive_options)
        archive.owns_backing_fs = True
        return archive
    if force_type.lower() != uri.scheme:
        raise ValueError(
            f"force_type {force_type!r} does not match the scheme {uri.scheme!r} of {url!r} "
            f"(use 'zip', 'tar' or the URL's scheme)"
        )
    if create:
        options["create"] = True
    return registry.create(uri, **options)


def lazify(init_func: Callable[[], FS], lazy_init: bool = True,
           recreate_on_fork: bool = True) -> FS:
    """Deprecated since PFIO 2.2: return ``init_func()``.

    pfio's filesystems are cheap to create and reconnect after ``fork`` by themselves, which
    is what ``lazify`` was for. (PFIO 2.10's ``lazify`` returned None, a bug; this returns
    the filesystem.)
    """
    warnings.warn("lazify is deprecated: filesystems are lazy and fork-safe already",
                  DeprecationWarning, stacklevel=2)
    return init_func()


def format_repr(cls: type, data: dict[str, Any]) -> str:
    """``module.Class(key=value, ...)``: the ``repr`` PFIO 2.x's filesystems had."""
    fields = ", ".join(f"{name}={value!r}" for name, value in data.items())
    return f"{cls.__module__}.{cls.__name__}({fields})"


__all__ = ["FS", "FileStat", "ForkedError", "RootNotADirectoryError", "RootNotFoundError",
           "__version__", "config", "format_repr",
           "from_url", "lazify", "open_url"]
