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
import posixpath
import threading
from typing import IO

from .._uri import container_kind, parse_uri, split_container_path
from ..api import from_url
from ..fs import resolver
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


def place(url: str) -> tuple[str, str]:
    """``(top URL, name)``: the URL of the top of the filesystem that holds ``url`` (a
    bucket, a ``mem://`` store, an HDFS namenode's ``/``, an archive) and ``url``'s path in
    it. Two URLs are on one filesystem when their tops are equal.

    >>> place("s3://b/out/a.png"), place("s3://b/train.zip/img/1.png")
    (('s3://b/', 'out/a.png'), ('s3://b/train.zip', 'img/1.png'))
    """
    uri = parse_uri(url)
    parent, name = uri.split()
    _, containers, inner = split_container_path(parent.path)
    if containers:
        top = parent.path[:len(parent.path) - len(inner)].rstrip("/")
    else:
        top, inner = "/", parent.path
    path = posixpath.normpath(posixpath.join("/", inner, name)).lstrip("/")
    return str(uri.with_path(top)), path


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


#: directories that the patches of this process made on filesystems where a directory
#: exists only through the files under it (S3 prefixes), as ``(top URL, path)``: they are
#: directories to this process until removed, empty or not (see :func:`note_made`)
_made: set[tuple[str, str]] = set()


def note_made(url: str, fs: FS, parents: bool = False) -> None:
    """Record that ``os.mkdir`` (or with ``parents`` ``os.makedirs``) made the directory
    ``url`` on ``fs``: where ``fs`` has no directories of its own (S3), this process treats
    ``url`` (and its parents) as an existing, possibly empty directory until it removes it,
    as it would on local disk (``tempfile.mkdtemp``, then write, move out, ``rmtree``)."""
    if not fs.implicit_directories:
        return
    top, path = place(url)
    with _lock:
        while path:
            _made.add((top, path))
            if not parents:
                break
            path = posixpath.dirname(path)


def made(url: str) -> bool:
    """True when :func:`note_made` recorded the directory ``url`` (or one below it) and it
    was not removed since."""
    top, path = place(url)
    if not path:
        return False
    with _lock:
        return (top, path) in _made or any(t == top and p.startswith(path + "/")
                                           for t, p in _made)


def forget_made(url: str) -> None:
    """``url`` and everything below it were removed (or renamed away)."""
    top, path = place(url)
    with _lock:
        _made.difference_update({(t, p) for t, p in _made
                                 if t == top and (p == path or p.startswith(path + "/"))})


def move_made(src: str, dst: str) -> None:
    """The directory ``src`` this process made (with those below it) is now ``dst``."""
    (src_top, src_path), (dst_top, dst_path) = place(src), place(dst)
    with _lock:
        moved = {(t, p) for t, p in _made
                 if t == src_top and (p == src_path or p.startswith(src_path + "/"))}
        _made.difference_update(moved)
        _made.update((dst_top, dst_path + p[len(src_path):]) for _, p in moved)
        _made.add((dst_top, dst_path))


def stat_url(url: str) -> FileStat:
    """The :class:`FileStat` of ``url`` (a root is a directory; so is a directory this
    process made, see :func:`note_made`).

    Raises:
        FileNotFoundError: nothing exists at ``url``.
    """
    parent, name = split_url(url)
    try:
        return directory(parent).stat(name)
    except FileNotFoundError:
        if _made and made(url):
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
    ``detail=True`` gives them.

    Raises:
        FileNotFoundError: nothing exists at ``url`` (a root lists empty instead).
        NotADirectoryError: ``url`` names a file.
    """
    parent, name = split_url(url)
    try:
        if not name or container_kind(name):
            return list(directory(url).list("", detail=True))
        return list(directory(parent).list(name, detail=True))
    except FileNotFoundError:
        if _made and made(url):
            return []
        raise


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
