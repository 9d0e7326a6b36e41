"""Directories made through the fsspec bridge on stores that keep no directories.

S3 has no directories: a prefix exists while an object is under it, and ``makedirs`` makes
nothing. Code written for fsspec's local filesystem (Lightning's loggers) makes a directory
and asks ``isdir`` of it before writing its first file there. So the bridge remembers, per
process, the directories it was asked to make that its backend did not keep: they are
directories (empty ones) for ``isdir``, ``exists``, ``info`` and ``ls`` of this process
until a removal through the bridge takes them away. Other processes see them once a file is
written under them, as S3 does.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_made: set[str] = set()
#: the directories made here and every level above them (what :func:`made` answers from)
_levels: set[str] = set()


def _with_parents(url: str) -> set[str]:
    """``url`` and its parent directories, up to its bucket or store."""
    scheme, _, rest = url.partition("://")
    parts = rest.split("/")
    return {f"{scheme}://" + "/".join(parts[:n]) for n in range(1, len(parts) + 1)}


def note(url: str) -> None:
    """Remember ``url`` (a pfio URL) as a directory made here."""
    url = url.rstrip("/")
    with _lock:
        _made.add(url)
        _levels.update(_with_parents(url))


def made(url: str) -> bool:
    """True when ``url`` or a directory below it was made here (so ``url`` is one)."""
    url = url.rstrip("/")
    with _lock:
        return url in _levels


def children(url: str) -> set[str]:
    """The names of the directories just below ``url`` that were made here."""
    below = url.rstrip("/") + "/"
    with _lock:
        return {m[len(below):].split("/", 1)[0] for m in _made if m.startswith(below)}


def forget(url: str) -> None:
    """``url`` was removed or moved away: forget it and every directory made below it."""
    url = url.rstrip("/")
    below = url + "/"
    with _lock:
        if url not in _levels:
            return
        _made.difference_update({m for m in _made if m == url or m.startswith(below)})
        _levels.clear()
        for m in _made:
            _levels.update(_with_parents(m))
