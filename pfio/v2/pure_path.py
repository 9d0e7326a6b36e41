""":class:`PurePath`: the pure part of :class:`~pfio.v2.path.Path` (no filesystem access)."""

from __future__ import annotations

import os
import posixpath
import warnings
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..fs.base import FS
from ..fs.local import Local

if TYPE_CHECKING:
    from typing_extensions import Self


class PurePath:
    """A path on a filesystem, with the :class:`pathlib.PurePosixPath` API (``/``, ``name``,
    ``suffix``, ``parent``, ``relative_to``, ``match``, ...): nothing here asks the
    filesystem. :class:`Path` adds the methods that do.

    Args:
        segments: path segments, joined as :class:`pathlib.PurePosixPath` joins them; a
            path among them lends its filesystem when ``fs`` is not given.
        fs: the filesystem; paths are relative to its root, and a leading ``/`` is its
            root too (as in PFIO 2.x). Default: :class:`Local` at the working directory.
    """

    __slots__ = ("_pure", "_fs")

    def __init__(self, *segments: str | os.PathLike[str] | PurePath,
                 fs: FS | None = None) -> None:
        if fs is None:
            fs = next((s._fs for s in segments if isinstance(s, PurePath)), None)
        self._fs: FS = fs if fs is not None else Local()
        self._pure: PurePosixPath = PurePosixPath(
            *(s._pure if isinstance(s, PurePath) else s for s in segments))

    def _make(self, pure: PurePosixPath) -> Self:
        path = object.__new__(type(self))
        path._pure = pure
        path._fs = self._fs
        return path

    @property
    def fs(self) -> FS:
        """The filesystem this path is on."""
        return self._fs

    # -- the pure-path API -------------------------------------------------------------

    def __truediv__(self, other: str | os.PathLike[str] | PurePath) -> Self:
        return self._make(self._pure / pure_of(other))

    def __rtruediv__(self, other: str | os.PathLike[str]) -> Self:
        return self._make(pure_of(other) / self._pure)

    def joinpath(self, *others: str | os.PathLike[str] | PurePath) -> Self:
        """This path joined with ``others``."""
        return self._make(self._pure.joinpath(*(pure_of(o) for o in others)))

    def __str__(self) -> str:
        return str(self._pure)

    def __repr__(self) -> str:
        """``Path('a/b')``, as in PFIO 2.x (the filesystem is :attr:`fs`)."""
        return f"{type(self).__name__}({str(self._pure)!r})"

    @property
    def _in_fs(self) -> str:
        """The path as the filesystem takes it: relative to its root (a leading ``/``
        anchors the path at the filesystem's root, as in PFIO 2.x)."""
        return str(self._pure).lstrip("/")

    def __bytes__(self) -> bytes:
        """The path as written, encoded as ``os.fsencode`` encodes (as pathlib's)."""
        return os.fsencode(str(self._pure))

    def __fspath__(self) -> str:
        """The path as written, on any filesystem (as in PFIO 2.x): ``os.fspath`` and the
        ``os.path`` functions work on it; the file's local path (for a :class:`Local`
        filesystem) is :meth:`local_path`."""
        return str(self._pure)

    def local_path(self) -> str:
        """The local path of the file: the :class:`Local` filesystem's root joined with the
        path.

        Raises:
            TypeError: the path is on another filesystem (it has no local path).
        """
        if not isinstance(self._fs, Local):
            raise TypeError(f"{self!r} is on {self._fs!r}, not on the local filesystem")
        return os.path.join(self._fs.cwd, self._in_fs) if self._in_fs else self._fs.cwd

    def as_posix(self) -> str:
        """The path with ``/`` separators."""
        return self._pure.as_posix()

    def as_uri(self) -> str:
        """The URL of an absolute path: ``file:///...`` for a local path, else the
        filesystem's URL (``s3://bucket/prefix/key``, ...). As in PFIO 2.x, the URL of ``/``
        is the root's URL joined with nothing: ``file:///data/`` for a local root,
        ``s3://bucket`` for a bucket and ``s3://bucket/prefix/`` for a prefix.

        Raises:
            ValueError: the path is relative (as pathlib's ``as_uri``).
        """
        if not self._pure.is_absolute():
            raise ValueError(f"relative path can't be expressed as a URI: {str(self)!r}")
        if isinstance(self._fs, Local):
            uri = PurePosixPath(os.path.abspath(self.local_path())).as_uri()
            return uri if self._in_fs or uri.endswith("/") else f"{uri}/"
        root = self._fs._describe("").rstrip("/")
        if self._in_fs:
            return f"{root}/{self._in_fs}"
        return f"{root}/" if urlsplit(root).path else root

    def with_segments(self, *segments: str | os.PathLike[str] | PurePath) -> Self:
        """A path of the same class on the same filesystem, made of ``segments``."""
        return type(self)(*segments, fs=self._fs)

    @property
    def sep(self) -> str:
        """Always ``"/"``."""
        return "/"

    @property
    def scheme(self) -> str:
        """The scheme of the filesystem (``"file"``, ``"s3"``, ...)."""
        return self._fs.scheme

    @property
    def drive(self) -> str:
        """Always ``""``: there are no drives."""
        return ""

    def _key(self) -> tuple[PurePosixPath, str]:
        return self._pure, repr(self._fs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PurePath):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: PurePath) -> bool:
        return self._compare(other) < 0

    def __le__(self, other: PurePath) -> bool:
        return self._compare(other) <= 0

    def __gt__(self, other: PurePath) -> bool:
        return self._compare(other) > 0

    def __ge__(self, other: PurePath) -> bool:
        return self._compare(other) >= 0

    def _compare(self, other: PurePath) -> int:
        if not isinstance(other, PurePath) or repr(other._fs) != repr(self._fs):
            raise TypeError(f"cannot order {self!r} and {other!r}: not paths on the same "
                            "filesystem")
        return (self._pure > other._pure) - (self._pure < other._pure)

    @property
    def parts(self) -> tuple[str, ...]:
        """The components of the path."""
        return self._pure.parts

    @property
    def root(self) -> str:
        """``"/"`` for an absolute path, else ``""``."""
        return self._pure.root

    @property
    def anchor(self) -> str:
        """The same as :attr:`root` (there are no drives)."""
        return self._pure.anchor

    @property
    def name(self) -> str:
        """The last component."""
        return self._pure.name

    @property
    def stem(self) -> str:
        """The last component without its suffix."""
        return self._pure.stem

    @property
    def suffix(self) -> str:
        """The extension of the last component (``".gz"`` of ``"a.tar.gz"``)."""
        return self._pure.suffix

    @property
    def suffixes(self) -> list[str]:
        """Every extension of the last component (``[".tar", ".gz"]``)."""
        return self._pure.suffixes

    @property
    def parent(self) -> Self:
        """The path without its last component."""
        return self._make(self._pure.parent)

    @property
    def parents(self) -> tuple[Self, ...]:
        """The ancestors, nearest first."""
        return tuple(self._make(p) for p in self._pure.parents)

    def with_name(self, name: str) -> Self:
        """This path with the last component replaced by ``name``."""
        return self._make(self._pure.with_name(name))

    def with_stem(self, stem: str) -> Self:
        """This path with the stem of the last component replaced by ``stem``."""
        return self._make(self._pure.with_stem(stem))

    def with_suffix(self, suffix: str) -> Self:
        """This path with the suffix replaced by ``suffix`` (``""`` removes it)."""
        return self._make(self._pure.with_suffix(suffix))

    def relative_to(self, *other: str | os.PathLike[str] | PurePath,
                    walk_up: bool = False) -> Self:
        """This path relative to ``other``; with ``walk_up``, ``..`` components reach paths
        that are not under ``other``. Several ``other`` segments are joined (deprecated,
        as in PFIO 2.x and pathlib).

        Raises:
            ValueError: this path is not under ``other`` (and ``walk_up`` is false), or one
                of the two is absolute and the other relative.
        """
        base = _joined(other, "relative_to")
        if not walk_up:
            return self._make(self._pure.relative_to(base))
        if base.is_absolute() != self._pure.is_absolute():
            raise ValueError(f"{str(self)!r} and {str(base)!r} are not both absolute or "
                             "both relative")
        return self._make(PurePosixPath(posixpath.relpath(self._pure, base)))

    def is_relative_to(self, *other: str | os.PathLike[str] | PurePath) -> bool:
        """True when this path is under ``other`` (several segments are joined, deprecated
        as in :meth:`relative_to`)."""
        return self._pure.is_relative_to(_joined(other, "is_relative_to"))

    def is_absolute(self) -> bool:
        """True when the path starts with ``/``."""
        return self._pure.is_absolute()

    def match(self, pattern: str, *, case_sensitive: bool | None = None) -> bool:
        """True when the path matches the glob ``pattern`` (from the right, as pathlib);
        case-sensitively unless ``case_sensitive`` is False."""
        if case_sensitive is False:
            return PurePosixPath(str(self._pure).lower()).match(pattern.lower())
        return self._pure.match(pattern)

    def is_reserved(self) -> bool:
        """Always False: POSIX paths reserve no names."""
        return False


def _joined(segments: tuple[str | os.PathLike[str] | PurePath, ...], method: str
            ) -> PurePosixPath:
    if len(segments) != 1:
        if not segments:
            raise TypeError(f"{method}() needs a path")
        warnings.warn(f"PurePath.{method} with several arguments is deprecated: pass one "
                      "joined path", DeprecationWarning, stacklevel=3)
    return PurePosixPath(*(pure_of(s) for s in segments))


def pure_of(segment: str | os.PathLike[str] | PurePath) -> PurePosixPath:
    """The :class:`pathlib.PurePosixPath` of a path segment or a :class:`PurePath`."""
    if isinstance(segment, PurePath):
        return segment._pure
    return PurePosixPath(segment)


__all__ = ["PurePath"]
