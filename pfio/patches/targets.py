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
from typing import Any, TypeGuard

from .. import config, registry
from .._uri import _SCHEME_RE, parse_uri
from ..api import open_url
from .locate import forget, refuse_directory_name

logger = logging.getLogger(__name__)

#: whether pfio serves a scheme that is neither built in nor registered (INI custom schemes,
#: fsspec protocols), asked once per scheme and process (an INI file reloaded later is not
#: asked again)
_other_schemes: dict[str, bool] = {}


def is_remote(arg: object) -> TypeGuard[str]:
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


def divert(remote: Callable[..., Any], *, paths: int = 1,
           with_original: bool = False) -> Callable[[Any], Any]:
    """A ``replace`` of :class:`~.machinery.PatchSpec` for functions whose leading
    positional arguments are paths: the plain function it makes of ``original`` calls
    ``remote(*args, **kwargs)`` when one of the first ``paths`` (1 or 2) positional
    arguments is a URL (or an ``os.PathLike`` of one, handed on as the URL string: see
    :func:`remote_path`), and ``original`` for anything else at the cost of one Python call
    (for functions that local code calls all the time, like ``os.stat``).

    With ``with_original`` the call is ``remote(original, *args, **kwargs)``, and ``file://``
    URLs among the paths are first made plain local paths: a call left with no remote path
    goes to ``original`` (``os.remove("file:///tmp/x")`` is ``os.remove("/tmp/x")``), as only
    the original has the exact local semantics.
    """
    if paths not in (1, 2):
        raise ValueError(f"divert: paths must be 1 or 2, not {paths}")

    def make(original: Any) -> Any:
        call = remote
        if with_original:
            call = functools.partial(_with_local_files, original, remote, paths)
        if paths == 1:
            @functools.wraps(original)
            def patched(*args: Any, **kwargs: Any) -> Any:
                if args:
                    path = args[0]
                    if type(path) is str:
                        if "://" in path and is_remote(path):
                            return call(*args, **kwargs)
                    else:
                        url = remote_path(path)
                        if url is not None:
                            return call(url, *args[1:], **kwargs)
                return original(*args, **kwargs)
        else:
            @functools.wraps(original)
            def patched(*args: Any, **kwargs: Any) -> Any:
                if len(args) >= 2:
                    first, second = args[0], args[1]
                    if (type(first) is str and "://" in first and is_remote(first)) or \
                            (type(second) is str and "://" in second and is_remote(second)):
                        return call(*args, **kwargs)
                    if type(first) is not str or type(second) is not str:
                        urls = remote_path(first), remote_path(second)
                        if urls != (None, None):
                            return call(urls[0] or first, urls[1] or second, *args[2:],
                                        **kwargs)
                return original(*args, **kwargs)

        return patched

    return make


def remote_path(arg: Any) -> str | None:
    """The URL that ``arg`` names when it is a remote URI or an ``os.PathLike`` object whose
    path is one (an entry of a patched ``os.scandir``, a path object of another library),
    else None. (``pathlib.Path("s3://b/k")`` is the local path ``s3:/b/k``: pathlib collapses
    the ``//``.)"""
    if type(arg) is not str:
        if isinstance(arg, (bytes, int)) or not hasattr(type(arg), "__fspath__"):
            return None
        arg = os.fspath(arg)
        if type(arg) is not str:
            return None
    return arg if "://" in arg and is_remote(arg) else None


def _with_local_files(original: Callable[..., Any], remote: Callable[..., Any], paths: int,
                      *args: Any, **kwargs: Any) -> Any:
    """``remote(original, ...)`` with ``file://`` URLs among the first ``paths`` arguments
    made local paths; ``original(...)`` when no remote URL is left among them."""
    head = [local_path(arg) for arg in args[:paths]]
    args = (*head, *args[paths:])
    if any(type(arg) is str and "://" in arg and is_remote(arg) for arg in head):
        return remote(original, *args, **kwargs)
    return original(*args, **kwargs)


def local_path(arg: Any) -> Any:
    """The local path a ``file://`` URL names (``file:///tmp/x`` is ``/tmp/x``); any other
    argument as it is."""
    if type(arg) is str and arg[:5].lower() == "file:":
        uri = parse_uri(arg)
        if uri.scheme == "file":
            return str(uri)
    return arg


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
    (for libraries that append to a file, like ``DataFrame.to_hdf``). A URL that ends
    with ``/`` names a directory: ``IsADirectoryError`` (``NotADirectoryError`` when a file
    is there), as local disk raises.
    """
    if url.endswith("/"):
        refuse_directory_name(url, writing=True)
    handle, path = tempfile.mkstemp(prefix="pfio-upload-", suffix=suffix(url))
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


def suffix(url: str) -> str:
    """The extension of ``url``'s name (``".png"``), for a local file that stands for it
    (libraries choose a format by it); ``""`` when it has none."""
    stem, dot, ext = posixpath.basename(url).rpartition(".")
    return dot + ext if dot and stem else ""
