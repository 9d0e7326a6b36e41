"""The name index of an archive: every member and directory by its normalised name.

Member names are normalised: a leading ``/`` and ``..`` components that would climb above
the archive's top are removed (with a warning), so no name reaches outside the archive.
"""

from __future__ import annotations

import logging
import posixpath
import stat as _stat
from typing import Any

logger = logging.getLogger(__name__)


class Entry:
    """One name in an archive index. Backends attach their own fields in ``info``."""

    __slots__ = ("name", "is_dir", "size", "mtime", "mode", "info")

    def __init__(self, name: str, is_dir: bool, size: int = 0, mtime: float | None = None,
                 mode: int | None = None, info: Any = None) -> None:
        self.name = name
        self.is_dir = is_dir
        self.size = size
        self.mtime = mtime
        if mode is None or not _stat.S_IFMT(mode):
            perm = (mode or 0) & 0o7777 or (0o755 if is_dir else 0o644)
            mode = (_stat.S_IFDIR if is_dir else _stat.S_IFREG) | perm
        self.mode = mode
        self.info = info


class ArchiveIndex:
    """Names of an archive: ``entries`` maps every file and directory (explicit or implied by
    a member's path) to its :class:`Entry`; ``children`` maps each directory to its entries."""

    def __init__(self, archive_name: str) -> None:
        self.archive_name = archive_name
        self.entries: dict[str, Entry] = {"": Entry("", True)}
        self.children: dict[str, dict[str, Entry]] = {"": {}}

    def add(self, raw_name: str, is_dir: bool, **fields: Any) -> Entry | None:
        """Add a member under its normalised name; return the entry (None for the top)."""
        name = normalize_member_name(raw_name, self.archive_name)
        if not name:
            return None
        entry = Entry(name, is_dir, **fields)
        previous = self.entries.get(name)
        if previous is not None and previous.is_dir and is_dir:
            previous.mtime, previous.mode, previous.info = entry.mtime, entry.mode, entry.info
            return previous
        self.entries[name] = entry
        if is_dir:
            self.children.setdefault(name, {})
        parent, base = _split(name)
        self._ensure_dir(parent)[base] = entry
        return entry

    def _ensure_dir(self, name: str) -> dict[str, Entry]:
        children = self.children.get(name)
        if children is not None:
            return children
        children = self.children[name] = {}
        entry = Entry(name, True)
        self.entries[name] = entry
        parent, base = _split(name)
        self._ensure_dir(parent)[base] = entry
        return children


def _split(name: str) -> tuple[str, str]:
    parent, _, base = name.rpartition("/")
    return parent, base


def normalize_member_name(raw: str, archive_name: str = "") -> str:
    """The name of a member as pfio shows it: relative, ``/``-separated, without ``.`` or
    ``..`` components and without a trailing ``/`` (a name that climbs out of the archive
    is logged as a warning)."""
    name = raw.replace("\\", "/") if "\\" in raw and "/" not in raw else raw
    clean = clean_name(name)
    if clean != name.rstrip("/") and _escapes(name):
        logger.warning("archive %s: member name %r climbs out of the archive; read as %r",
                       archive_name, raw, clean)
    return clean


def clean_name(name: str) -> str:
    """``name`` relative to the archive's top, without empty, ``.`` or ``..`` components and
    without a trailing ``/`` (``..`` at the top stays at the top, as in a ``chroot``):
    ``"a//b/../c/"`` is ``"a/c"``, ``"//..//"`` is ``""``."""
    if name.startswith("./"):
        name = name[2:]
    if "//" in name or "/." in name or name.startswith((".", "/")):
        name = posixpath.normpath("/" + name).lstrip("/")
        if name == ".":
            name = ""
    return name.rstrip("/")


def _escapes(name: str) -> bool:
    depth = 0
    if name.startswith("/"):
        return True
    for part in name.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False
