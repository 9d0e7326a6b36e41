"""From a URL handed to a patched call to the filesystem that serves it.

Everything the patches do on a URL goes through the few functions here: :func:`split_url`
(the one place where a URL is cut into a directory and a name), :func:`directory` (the
filesystem of a directory URL, kept per process so that an archive's directory is read once,
not on every call), :func:`stat_url`, :func:`list_directory` and :func:`open_for_reading`.

Streamed reads (``open``, ``PIL``, ``numpy``, ``torch``, ``h5py``, ``soundfile``) go through
the object cache when it is on (``patch_all(cache=True)``): small files are then kept whole
and large ones in blocks, fetched as they are read (see :class:`pfio.cache.CachedFS`), so
the next epoch reads local disk.
"""

from __future__ import annotations

import errno
import os
import threading
from typing import IO

from .._uri import container_kind, parse_uri, split_container_path
from ..api import from_url
from ..fs import made_directories, resolver
from ..fs.base import FS
from ..fs.stat import FileStat

#: environment variable that carries the cache switch to processes started by spawn or
#: forkserver, as ``PFIO_PATCHES`` carries the targets
CACHE_ENV_VAR = "PFIO_PATCHES_CACHE"

#: filesystems (archives aside) kept per process before the memo starts over
_MEMO_LIMIT = 256

_lock = threading.Lock()
_filesystems: dict[tuple[str, bool], FS] = {}
_cache_on = os.environ.get(CACHE_ENV_VAR) == "1"


def split_url(url: str) -> tuple[str, str]:
    """``(directory URL, name)`` of ``url``; the name is ``""`` at a root (a bucket, a store):
    ``"s3://b/train.zip/a/"`` gives ``("s3://b/train.zip", "a")``, ``"s3://b"`` gives
    ``("s3://b", "")``."""
    parent, name = parse_uri(url).split()
    return str(parent), name


def set_cache(on: bool) -> None:
    """Read streamed files through the default object cache (``on``) or straight from their
    filesystem; processes started by spawn or forkserver inherit the choice."""
    global _cache_on
    _cache_on = bool(on)
    if _cache_on:
        os.environ[CACHE_ENV_VAR] = "1"
    else:
        os.environ.pop(CACHE_ENV_VAR, None)


def cache_on() -> bool:
    """True when streamed reads go through the object cache."""
    return _cache_on


def directory(url: str, cached: bool = False) -> FS:
    """The filesystem rooted at the directory ``url`` (an archive's included), read through
    the default object cache when ``cached``. It is shared by the calls of this process:
    never close it. Archives on the way are the resolver's shared ones (opened once per
    process, checked for changes as their filesystem's validation policy says); the
    filesystems they sit on are kept here, one per URL."""
    uri = parse_uri(url)
    outer, _, _ = split_container_path(uri.path)
    fs, inner = resolver.descend(_base(str(uri.with_path(outer)), cached), uri.path[len(outer):])
    return fs.subfs(inner) if inner else fs


def _base(url: str, cached: bool) -> FS:
    """The filesystem (no archive) at ``url``, made once per process and cache switch."""
    key = (url, cached)
    fs = _filesystems.get(key)
    if fs is None:
        if cached:
            from ..cache.object_cache import default_object_cache

            fs = from_url(url, cache=default_object_cache())
        else:
            fs = from_url(url)
        with _lock:
            if len(_filesystems) >= _MEMO_LIMIT:
                _filesystems.clear()
            fs = _filesystems.setdefault(key, fs)
    return fs


def forget(url: str) -> None:
    """``url`` is being written: an archive there must be read again on its next use."""
    resolver.forget(url)


def stat_url(url: str) -> FileStat:
    """The :class:`FileStat` of ``url`` (a root is a directory; so is a directory this
    process made on a filesystem without directories, see :mod:`pfio.fs.made_directories`).

    Raises:
        FileNotFoundError: nothing exists at ``url``.
    """
    parent, name = split_url(url)
    try:
        return directory(parent).stat(name)
    except FileNotFoundError:
        if made_directories.made(url):
            return FileStat.directory(name)
        raise


def refuse_directory_name(url: str, writing: bool) -> None:
    """Raise what local disk raises when a file is opened by a name that ends with ``/``
    (call it for such a ``url``, which always names a directory, never the file without the
    ``/``): ``NotADirectoryError`` when a file is there, ``IsADirectoryError`` for a
    directory or, when ``writing``, for nothing; ``FileNotFoundError`` when reading nothing.
    """
    try:
        is_dir = stat_url(url).isdir()
    except FileNotFoundError:
        if not writing:
            raise
        is_dir = True
    if is_dir:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), url)
    raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), url)


def list_directory(url: str) -> list[FileStat]:
    """The entries of the directory ``url`` (an archive's included), as ``FS.list`` with
    ``detail=True`` gives them, and the directories this process made below it on a
    filesystem without directories (see :mod:`pfio.fs.made_directories`).

    Raises:
        FileNotFoundError: nothing exists at ``url`` (a root lists empty instead).
        NotADirectoryError: ``url`` names a file.
    """
    parent, name = split_url(url)
    try:
        if not name or container_kind(name):
            entries = list(directory(url).list("", detail=True))
        else:
            entries = list(directory(parent).list(name, detail=True))
    except FileNotFoundError:
        if not made_directories.made(url):
            raise
        entries = []
    return made_directories.listed(url, entries)


#: what the opening read of a file opened for a library's random access takes (on S3: one
#: ranged GET of this much, not a plain GET of the whole object)
RANDOM_OPENING = 64 << 10


def open_for_reading(url: str, whole: bool = False) -> IO[bytes]:
    """A seekable binary file object reading ``url`` (through the object cache when it is
    on). For a library that reads the file through (``whole``: an image decoder), the
    filesystem's own opening, which reads on from the start (on S3: one plain GET of the
    whole object, for files up to the reader's first fetch of 1 MiB); else ranged reads,
    no copy of the whole file up front (the opening read takes :data:`RANDOM_OPENING`
    bytes). Through the cache a miss costs one opening of the source either way (see
    :class:`pfio.cache.CachedFS`).

    Raises:
        FileNotFoundError: ``url`` does not exist.
        IsADirectoryError: ``url`` names a directory or a root.
    """
    parent, name = split_url(url)
    if not name:
        raise IsADirectoryError(f"{url!r} names a root, not a file")
    fs = directory(parent, cached=_cache_on)
    if whole:
        return fs.open(name, "rb")
    return fs.open(name, "rb", first_fetch=RANDOM_OPENING)
