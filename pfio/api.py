"""``from_url`` and ``open_url``: the entry points from a URL to a filesystem or a file."""

from __future__ import annotations

from typing import IO, Any

from . import registry
from ._uri import URI, parse_uri, split_container_path
from .fs import resolver
from .fs.base import FS


def from_url(url: str, *, create: bool = False, **options: Any) -> FS:
    """Return the filesystem at ``url``.

    ``url`` is ``scheme://netloc/path`` (``s3://bucket/prefix``, ``hdfs://ns/dir``,
    ``mem://store/dir``, ``file:///abs/dir``) or a plain local path. The scheme picks the
    filesystem class from the registry (see :func:`pfio.register_filesystem`); ``options`` go
    to its constructor (for example ``endpoint=...`` for S3).

    A path component ending in ``.zip``, ``.tar``, ``.tar.gz`` or ``.tgz`` is opened as a
    container, so ``from_url("s3://b/train.zip")`` is the zip archive itself and
    ``from_url("s3://b/train.zip/images")`` its ``images`` directory. Containers nest
    (``outer.zip/inner.tar``). A directory with such a name is walked into as a directory.

    Args:
        url: where the filesystem is rooted.
        create: create the root directory when it is missing (where the backend has
            directories).
        options: backend options.
        cache: (option) read files through an object cache: True for the default one
            (``$XDG_CACHE_HOME/pfio/objects``), a directory, or a
            :class:`pfio.cache.ObjectCache`; see :class:`pfio.cache.CachedFS`. A container
            on the path reads its backing file through the cache.

    Raises:
        ValueError: a malformed URL, or a scheme that no filesystem serves (the message lists
            the known ones).
    """
    uri = parse_uri(url)
    cache = options.pop("cache", None)
    if create:
        options["create"] = True
    wrap = None if cache is None or cache is False else lambda fs: _cached(fs, cache)
    fs, rest = resolver.open_directory(uri, shared=False, wrap=wrap, **options)
    return fs.subfs(rest) if rest else fs


def _cached(fs: FS, cache: Any) -> FS:
    """``fs`` read through the object cache ``cache`` names."""
    from .cache.cached_fs import CachedFS

    return CachedFS(fs, cache)


def open_url(url: str, mode: str = "r", **kwargs: Any) -> IO[Any]:
    """Open the file at ``url`` and return the file object (a context manager).

    ``mode`` defaults to text reading (``"r"``), as for builtin ``open`` and PFIO 2.x; use
    ``"rb"`` for bytes. Other keyword arguments are those of :meth:`FS.open` (``encoding``,
    ``newline``, ``buffering``, ...). A member of a container is reached through the
    container's path: ``open_url("s3://b/train.zip/img/0001.jpg", "rb")``; the archive is
    opened once per process and shared (see :mod:`pfio.fs.resolver`), so each call costs
    one read of the member.

    Raises:
        FileNotFoundError: the file does not exist (a missing container member raises an
            error that is also a ``KeyError``).
        ValueError: a malformed URL or an unknown scheme.
    """
    uri = parse_uri(url)
    if not split_container_path(uri.path)[1]:
        factory = registry.resolve(uri.scheme)
        opener = getattr(getattr(factory, "__self__", None), "_open_uri", None)
        if opener is not None:
            f: IO[Any] = opener(uri, mode, **kwargs)
            return f
    fs, name = resolver.locate(uri)  # an archive on the way is opened once per process
    if not name:
        raise IsADirectoryError(f"{url!r} names the root of a filesystem, not a file")
    return fs.open(name, mode, **kwargs)


__all__ = ["from_url", "open_url", "URI"]
