""":class:`FileStat`: what ``FS.stat`` and ``FS.list(detail=True)`` return."""

from __future__ import annotations

import stat as _stat
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._uri import parent_directories

if TYPE_CHECKING:
    from typing_extensions import Self


class FileStat:
    """Information about one file or directory.

    The common fields have the same meaning on every filesystem and container; backends add
    their own (``etag`` on S3, ``crc32`` and ``compressed_size`` in a zip, ...).

    Attributes:
        filename: the name as the listing or ``stat`` call gave it.
        last_modified: modification time as a UNIX timestamp (float); None where unknown.
        mode: ``st_mode`` style bits: file type (``S_IFDIR``/``S_IFREG``) and permissions.
        size: size in bytes (0 for directories on most filesystems).
    """

    filename: str
    last_modified: float | None
    mode: int
    size: int

    def __init__(
        self,
        filename: str,
        size: int = 0,
        mode: int = _stat.S_IFREG | 0o644,
        last_modified: float | None = None,
        **extra: object,
    ) -> None:
        self.filename = filename
        self.size = size
        self.mode = mode
        self.last_modified = last_modified
        for key, value in extra.items():
            setattr(self, key, value)

    @classmethod
    def directory(cls, filename: str, last_modified: float | None = None,
                  **extra: object) -> Self:
        """A stat for a directory named ``filename``."""
        return cls(filename, 0, _stat.S_IFDIR | 0o755, last_modified, **extra)

    def isdir(self) -> bool:
        """True when this entry is a directory."""
        return _stat.S_ISDIR(self.mode)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} filename={self.filename!r} size={self.size} "
            f"mode={_stat.filemode(self.mode)!r}>"
        )


def with_implied_directories(entries: Iterable[FileStat]) -> list[FileStat]:
    """The entries of a recursive ``list(detail=True)``, and a directory entry for each
    directory the listing names only through the names below it (a zip archive lists its
    members only, S3 its keys).

    >>> [st.filename for st in with_implied_directories([FileStat("a/b/c")])]
    ['a/b/c', 'a', 'a/b']
    """
    entries = list(entries)
    names = {st.filename.rstrip("/") for st in entries}
    implied = sorted(parent_directories(names) - names)
    return entries + [FileStat.directory(name) for name in implied]
