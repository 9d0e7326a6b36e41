"""Deciding which arguments patches take over, and the two spooling moves they make.

A *remote URI* is a ``str`` of the form ``scheme://...`` whose scheme a pfio filesystem serves
(``s3``, ``hdfs``, ``mem``, ``file``, plugins). Everything else (local paths as ``str`` or
``Path``, file objects, bytes, ints) goes to the original function untouched.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from .. import config, registry
from .._uri import _SCHEME_RE
from ..api import open_url
from .locate import forget

logger = logging.getLogger(__name__)

#: whether pfio serves a scheme that is neither built in nor registered (INI custom schemes,
#: fsspec protocols), asked once per scheme and process (an INI file reloaded later is not
#: asked again)
_other_schemes: dict[str, bool] = {}


def is_remote(arg: Any) -> bool:
    """True when ``arg`` is a URL of a scheme that :func:`pfio.from_url` opens (built-in,
    registered and entry-point schemes, custom schemes of the INI file, fsspec protocols),
    which pfio should open instead of the patched library."""
    if type(arg) is not str:
        return False
    end = arg.find("://")
    if end <= 0:
        return False
    scheme = arg[:end].lower()
    if registry.is_registered(scheme):
        return True
    served = _other_schemes.get(scheme)
    if served is None:
        if not _SCHEME_RE.match(scheme):
            return False  # "dir/x://y" is a local path
        served = _other_schemes[scheme] = _served_elsewhere(scheme, arg)
    return served


def divert(remote: Callable[..., Any]) -> Callable[[Any], Any]:
    """A ``replace`` of :class:`~.machinery.PatchSpec` for functions whose first argument is
    a path: the plain function it makes of ``original`` calls ``remote(*args, **kwargs)``
    when that argument is a URL, and ``original`` for anything else at the cost of one
    Python call (for functions that local code calls all the time, like ``os.stat``)."""

    def make(original: Any) -> Any:
        @functools.wraps(original)
        def patched(*args: Any, **kwargs: Any) -> Any:
            if args:
                path = args[0]
                if type(path) is str and "://" in path and is_remote(path):
                    return remote(*args, **kwargs)
            return original(*args, **kwargs)

        return patched

    return make


def _served_elsewhere(scheme: str, url: str) -> bool:
    """Whether the INI file or fsspec serves ``scheme``; warns (once: the answer is kept)
    when nothing does."""
    try:
        registry.resolve(scheme)
        return True
    except ValueError:
        if config.get_custom_scheme(scheme) is not None:
            return True  # a malformed section: let from_url say what is wrong with it
    logger.warning(
        "pfio patches: no filesystem serves the scheme %r of %r, so the patched call "
        "passes it to the original function as a local path; known schemes: %s",
        scheme, url, ", ".join(registry.known_schemes()))
    return False


#: URLs a patch of this process wrote since it last made a local copy of them
_written_here: set[str] = set()


@contextlib.contextmanager
def local_copy(url: str) -> Iterator[str]:
    """A local file path holding the bytes of ``url`` for the duration of the block.

    The file comes from pfio's object cache: downloaded once, shared by processes, kept for
    the next epoch. A URL this process wrote through a patch (:func:`note_written`) is
    fetched again, whatever the cache's validation policy.
    """
    from ..cache.object_cache import default_object_cache

    cache = default_object_cache()
    if url in _written_here:
        _written_here.discard(url)
        cache.invalidate(url)
    with cache.path(url) as path:
        yield path


def note_written(url: str) -> None:
    """Record that a patch is writing ``url``: the next :func:`local_copy` of it refetches
    (a cached copy made before the write would be stale)."""
    _written_here.add(url)
    forget(url)


@contextlib.contextmanager
def upload_on_success(url: str, download_first: bool = False) -> Iterator[str]:
    """A local temporary path to write to; its bytes are uploaded to ``url`` when the block
    ends without an exception (atomically, as every pfio write), and dropped otherwise.

    The temporary file keeps the URL's extension, since libraries such as OpenCV choose the
    format from it. With ``download_first``, an existing object is copied to the path first
    (for libraries that append to a file, like ``DataFrame.to_hdf``).
    """
    suffix = "".join(_suffixes(url))
    handle, path = tempfile.mkstemp(prefix="pfio-upload-", suffix=suffix)
    os.close(handle)
    try:
        if download_first:
            try:
                with open_url(url, "rb") as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except FileNotFoundError:
                os.unlink(path)
        yield path
        if os.path.exists(path):
            note_written(url)
            with open(path, "rb") as src, open_url(url, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _suffixes(url: str) -> list[str]:
    name = posixpath.basename(url)
    stem, dot, ext = name.rpartition(".")
    return [dot + ext] if dot and stem else []
