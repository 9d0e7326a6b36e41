"""``glob.glob`` and ``glob.iglob`` accept remote URIs.

``glob.glob("s3://b/train/*/*.jpg")`` returns the matching URLs, sorted. The pattern is cut
at its first component with a wildcard: the part before it names a directory (an archive's
included, ``s3://b/train.zip/*/*.png``) whose filesystem matches the rest with
:meth:`pfio.fs.base.FS.glob`. As in :mod:`glob`, ``**`` spans directories only with
``recursive=True``, and names starting with ``.`` match a wildcard only with
``include_hidden=True`` (or when the pattern itself has a component starting with ``.``).
A pattern ending with ``/`` matches directories only (and their URLs end with ``/``). A
remote ``root_dir`` makes the results relative to it, as for a local one.
"""

from __future__ import annotations

import glob as _glob
from collections.abc import Iterator
from typing import Any

from .locate import directory, stat_url
from .machinery import PatchSpec, define_target
from .targets import is_remote


def _matches(pattern: str, recursive: bool, include_hidden: bool) -> Iterator[str]:
    """The URLs that ``pattern`` (a URL) matches."""
    parts = pattern.split("/")
    first = next((i for i, p in enumerate(parts) if i >= 3 and _glob.has_magic(p)), None)
    if first is None:  # no wildcard: the path itself, when it exists
        try:
            stat_url(pattern)
        except (FileNotFoundError, NotADirectoryError):
            return
        yield pattern
        return
    top = "/".join(parts[:first])
    rest = [p if recursive or p != "**" else "*" for p in parts[first:]]
    hidden_ok = include_hidden or any(p.startswith(".") for p in rest)
    try:
        fs = directory(top)
        # FS.glob's "list[str]" reads ``list`` as the method FS.list (pfio/fs/base.py)
        names = fs.glob("/".join(rest))
    except (FileNotFoundError, NotADirectoryError):
        return
    base = top if top.endswith("/") else top + "/"
    dirs_only = pattern.endswith("/")
    for name in names:
        if not hidden_ok and any(c.startswith(".") for c in name.split("/")):
            continue
        if not dirs_only:
            yield base + name
        elif fs.isdir(name):
            yield base + name + "/"


def _iglob(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    pathname = args[0] if args else kwargs.get("pathname")
    root_dir = kwargs.get("root_dir")
    recursive = kwargs.get("recursive", False)
    hidden = kwargs.get("include_hidden", False)
    if is_remote(pathname):
        return _matches(pathname, recursive, hidden)
    if is_remote(root_dir) and isinstance(pathname, str):
        base = root_dir.rstrip("/") + "/"
        return (url[len(base):] for url in _matches(base + pathname, recursive, hidden))
    return wrapped(*args, **kwargs)


def _glob_list(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    pathname = args[0] if args else kwargs.get("pathname")
    if is_remote(pathname) or is_remote(kwargs.get("root_dir")):
        return list(_iglob(None, None, args, kwargs))
    return wrapped(*args, **kwargs)


define_target("glob", [
    PatchSpec("glob", "glob", _glob_list),
    PatchSpec("glob", "iglob", _iglob),
])
