"""Glob patterns matched against a filesystem's listings, for :meth:`FS.glob
<pfio.fs.base.FS.glob>`: one path component at a time, listing only the directories a
pattern's wildcards need."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .._uri import parent_directories

if TYPE_CHECKING:
    from .base import FS


def has_magic(part: str) -> bool:
    """True when ``part`` holds a glob wildcard (``*``, ``?`` or ``[``)."""
    return any(c in part for c in "*?[")


def walk(fs: FS, base: str, parts: list[str]) -> Iterator[str]:
    """The paths of ``fs`` under ``base`` that match the pattern components ``parts``
    (``**`` as a whole component: any number of directories, none included); a path may be
    yielded more than once."""
    head, rest = parts[0], parts[1:]
    if head == "**":
        entries = list(_entries(fs, base, recursive=True))
        files = [name for name, is_dir in entries if not is_dir]
        dirs = {name for name, is_dir in entries if is_dir}
        dirs |= parent_directories(files)  # those a listing names only through files
        if rest:
            yield from walk(fs, base, rest)
            for name in sorted(dirs):
                yield from walk(fs, posixpath.join(base, name), rest)
        else:
            yield from (posixpath.join(base, name) for name in (*dirs, *files))
        return
    if not has_magic(head):
        candidate = posixpath.join(base, head)
        if not rest:
            if fs.exists(candidate):
                yield candidate
        elif fs.isdir(candidate):
            yield from walk(fs, candidate, rest)
        return
    matcher = re.compile(fnmatch.translate(head)).match
    for name, is_dir in _entries(fs, base):
        if not matcher(name):
            continue
        candidate = posixpath.join(base, name)
        if not rest:
            yield candidate
        elif is_dir:
            yield from walk(fs, candidate, rest)


def _entries(fs: FS, path: str, recursive: bool = False) -> Iterator[tuple[str, bool]]:
    """``fs._entries(path)``, none for a path that is missing or not a directory."""
    try:
        yield from fs._entries(path, recursive)
    except (FileNotFoundError, NotADirectoryError):
        return
