"""What a copy or a sync does: the files under a source and under a destination, and which
of them to copy, to leave as they are, and to delete.

Names come from listings; one that is not a plain relative path (an empty, ``.`` or ``..``
component, a leading ``/``) would land outside the destination or name another file, so
a transfer whose listings hold one is refused before anything is written
(:func:`check_names`).
"""

from __future__ import annotations

import math
import posixpath
import re
from dataclasses import dataclass, field

from .._uri import URI, is_relative_name
from ..digests import md5_hasher
from ..fs.base import COPY_CHUNK, FS
from ..fs.stat import FileStat, with_implied_directories

#: how :func:`pfio.sync` tells a file that needs copying from one that does not
COMPARES = ("size_mtime", "size", "etag", "checksum")

_MD5 = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Tree:
    """The files (name -> stat) and directories listed under the root of a filesystem."""

    files: dict[str, FileStat] = field(default_factory=dict)
    directories: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Item:
    """One file to copy: ``name`` in the source (and, unless ``target_name`` says
    otherwise, in the destination), its stat, and the destination's file when there is one.
    With ``check``, sizes are equal and digests decide whether it is copied."""

    name: str
    source: FileStat
    target: FileStat | None = None
    check: bool = False
    target_name: str | None = None

    @property
    def destination(self) -> str:
        """The file's name in the destination."""
        return self.target_name if self.target_name is not None else self.name


@dataclass
class Plan:
    """What a transfer does: ``items`` to copy (or check), the names ``skipped`` as
    unchanged, the destination's files to delete, and the directories to make there."""

    items: list[Item] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    deletions: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)


def check_names(names: list[str], src: str, dst: str) -> None:
    """Refuse a recursive copy from ``src`` to ``dst`` (before anything is written) when a
    listed name is not a plain relative path (:func:`pfio._uri.is_relative_name`): joined
    to the destination, a leading ``/`` or a ``..`` component would land outside it, and an
    empty or ``.`` component would name another file than the one listed.

    pfio's own filesystems never list such names (archives normalise member names, S3 skips
    such keys with a warning); this guards a copy against any other filesystem.

    Raises:
        ValueError: naming ``src``, the first such name and how many there are.
    """
    bad = [name for name in names if not is_relative_name(name)]
    if bad:
        raise ValueError(f"{src}: refusing to copy to {dst}: {len(bad)} listed name(s) would "
                         f"land outside it or name another file, e.g. {bad[0]!r} (an empty, "
                         "'.' or '..' component, or a leading '/')")


def relative_inside(path: URI, directory: URI) -> str | None:
    """The name of ``path`` relative to ``directory`` (``"."`` for the directory itself)
    when it lies there or under it, else None: a transfer between the two would copy
    into what it reads (or, with deletions, delete its own source)."""
    if (path.scheme, path.netloc) != (directory.scheme, directory.netloc):
        return None
    if path.scheme == "file":
        full, top = posixpath.abspath(path.path), posixpath.abspath(directory.path)
    else:
        full, top = posixpath.normpath("/" + path.path), posixpath.normpath("/" + directory.path)
    relative = posixpath.relpath(full, top)
    return None if relative == ".." or relative.startswith("../") else relative


def list_tree(fs: FS, src: str, dst: str) -> Tree:
    """Everything under the root of ``fs`` (the directories its listing only implies
    included), once :func:`check_names` has passed the names (``src`` and ``dst`` name the
    transfer in its error).

    Raises:
        FileNotFoundError: the root does not exist.
        NotADirectoryError: the root is a file.
        ValueError: a listed name is refused.
    """
    listed = list(fs.list("", recursive=True, detail=True))
    check_names([st.filename for st in listed], src, dst)
    files: dict[str, FileStat] = {}
    directories: set[str] = set()
    for st in with_implied_directories(listed):
        name = st.filename.rstrip("/")
        if st.isdir():
            directories.add(name)
        else:
            files[name] = st
    return Tree(files, frozenset(directories))


def plan_sync(source: Tree, target: Tree, compare: str, delete: bool) -> Plan:
    """The plan that makes ``target`` hold ``source``'s files: a file is left when
    :func:`unchanged` says so (or, with ``"etag"``/``"checksum"``, when equal sizes leave
    it to the digests, checked as it is copied); with ``delete`` the target's files absent
    from the source are deleted."""
    plan = Plan()
    for name in sorted(source.files):
        st, there = source.files[name], target.files.get(name)
        if there is None:
            plan.items.append(Item(name, st))
        elif compare in ("etag", "checksum"):
            plan.items.append(Item(name, st, there, check=st.size == there.size))
        elif unchanged(st, there, compare):
            plan.skipped.append(name)
        else:
            plan.items.append(Item(name, st, there))
    if delete:
        plan.deletions = sorted(set(target.files) - set(source.files))
    plan.directories = sorted(source.directories - target.directories)
    return plan


def unchanged(source: FileStat, target: FileStat, compare: str) -> bool:
    """Whether ``target`` already holds ``source``'s data as ``compare`` judges it from the
    stats alone: ``"size"``: equal sizes; ``"size_mtime"``: equal sizes and a target not
    older than the source, in whole seconds (S3 keeps whole seconds; an unknown time
    counts as changed)."""
    if source.size != target.size:
        return False
    if compare == "size":
        return True
    if source.last_modified is None or target.last_modified is None:
        return False
    return math.floor(target.last_modified) >= math.floor(source.last_modified)


def digest(fs: FS, name: str, st: FileStat, compare: str) -> str:
    """The digest that ``compare`` (``"etag"`` or ``"checksum"``) compares for the file
    ``name`` of ``fs``: with ``"etag"``, the ETag the store reports (S3), else the MD5 of the
    bytes (what S3 reports for an object sent in one PUT); with ``"checksum"``, the MD5 of
    the bytes, taken from the ETag when it is one (a single-part upload), else read."""
    etag = str(getattr(st, "etag", "") or "").strip('"').lower()
    if etag and (compare == "etag" or _MD5.fullmatch(etag)):
        return etag
    md5 = md5_hasher()
    with fs.open(name, "rb") as f:
        while chunk := f.read(COPY_CHUNK):
            md5.update(chunk)
    return md5.digest().hex()
