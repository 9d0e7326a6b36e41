"""The directories this process made on filesystems that keep none (S3 prefixes).

On S3 a prefix exists while an object is under it: ``mkdir`` and ``makedirs`` make nothing.
Code written for local disk makes a directory and then uses it before (or without) writing
a file there: ``tempfile.mkdtemp``, write, move the file out, ``shutil.rmtree``; Lightning's
loggers ask ``isdir`` of a directory they just made. So the faces of pfio that make
directories for such code (the ``os``/``shutil`` patches, the fsspec bridge) note here what
they made, and both answer from this one record: a directory made through one is a
directory through the other, (empty) for the rest of the process until one of them removes
it. Its parents are directories too, and they stay when it is removed, as on local disk.
Other processes see such a directory once a file is written under it, as S3 does.

Entries are ``(top URL, path)`` as :func:`pfio._uri.place` gives them, so every spelling of
one directory (``s3://b/a/``, ``s3://b/a``, ``s3://b/x/../a``) is one entry.
"""

from __future__ import annotations

import posixpath
import threading

from .._uri import parent_directories, place
from .base import FS
from .stat import FileStat

_lock = threading.Lock()
#: the directories noted, as ``(top URL, path)``
_made: set[tuple[str, str]] = set()
#: the directories noted and every level above them: what :func:`made` answers from
_levels: set[tuple[str, str]] = set()


def note(url: str, fs: FS, parents: bool = False) -> None:
    """Record that the directory ``url`` was made on ``fs`` (and with ``parents``, as
    ``makedirs`` makes them, every level above it, which then stay when ``url`` is
    removed). Nothing is recorded where ``fs`` keeps directories of its own."""
    if not fs.implicit_directories:
        return
    top, path = place(url)
    if not path:
        return
    noted = {path} | (parent_directories([path]) if parents else set())
    with _lock:
        _made.update((top, p) for p in noted)
        _levels.update((top, p) for p in noted | parent_directories([path]))


def made(url: str) -> bool:
    """True when ``url`` is a directory noted here, or above one, and was not removed."""
    if not _made:
        return False
    key = place(url)
    with _lock:
        return key in _levels


def children(url: str) -> set[str]:
    """The names of the noted directories (or their parents) just below ``url``."""
    top, path = place(url)
    with _lock:
        return {posixpath.basename(p) for t, p in _levels
                if t == top and p != path and posixpath.dirname(p) == path}


def listed(url: str, entries: list[FileStat]) -> list[FileStat]:
    """``entries`` (a listing of the directory ``url``) with the noted directories just below
    ``url`` that it lacks, as empty directories (named with a trailing ``/``, as S3's
    listings name prefixes)."""
    if not _made:
        return entries
    names = {st.filename.rstrip("/") for st in entries}
    return entries + [FileStat.directory(name + "/")
                      for name in sorted(children(url) - names)]


def forget(url: str) -> None:
    """``url`` and everything below it were removed (or renamed away)."""
    top, path = place(url)
    with _lock:
        if (top, path) in _levels:
            _made.difference_update(_below(top, path))
            _rebuild_levels()


def move(src: str, dst: str) -> None:
    """The directory ``src`` was renamed ``dst``: the directories noted at ``src`` and below
    it are now at ``dst`` (nothing is noted when none was)."""
    (src_top, src_path), (dst_top, dst_path) = place(src), place(dst)
    with _lock:
        moved = _below(src_top, src_path)
        if not moved:
            return
        _made.difference_update(moved)
        _made.update((dst_top, dst_path + p[len(src_path):]) for _, p in moved)
        _made.add((dst_top, dst_path))
        _rebuild_levels()


def _below(top: str, path: str) -> set[tuple[str, str]]:
    """The noted entries at ``path`` of ``top`` or below it (call with the lock held)."""
    return {(t, p) for t, p in _made
            if t == top and (p == path or p.startswith(path + "/") or not path)}


def _rebuild_levels() -> None:
    """Make :data:`_levels` :data:`_made` and their parents again (with the lock held)."""
    _levels.clear()
    _levels.update(_made)
    for top in {t for t, _ in _made}:
        _levels.update((top, p) for p in parent_directories(p for t, p in _made if t == top))
