""":class:`Path`: a :mod:`pathlib`-like path on any pfio filesystem."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import IO, Any

from ..fs.base import FS
from ..fs.local import Local
from ..fs.stat import FileStat


class PurePath:
    """A path on a filesystem, with the :class:`pathlib.PurePosixPath` API (``/``, ``name``,
    ``suffix``, ``parent``, ``relative_to``, ``match``, ...): nothing here asks the
    filesystem. :class:`Path` adds the methods that do.

    Args:
        segments: path segments, joined as :class:`pathlib.PurePosixPath` joins them; a
            path among them lends its filesystem when ``fs`` is not given.
        fs: the filesystem; paths are relative to its root. Default: :class:`Local` at the
            working directory.
    """

    __slots__ = ("_pure", "_fs")

    def __init__(self, *segments: str | os.PathLike[str] | PurePath,
                 fs: FS | None = None) -> None:
        if fs is None:
            fs = next((s._fs for s in segments if isinstance(s, PurePath)), None)
        self._fs: FS = fs if fs is not None else Local()
        self._pure = PurePosixPath(*(s._pure if isinstance(s, PurePath) else s for s in segments))

    def _make(self, pure: PurePosixPath) -> PurePath:
        path = object.__new__(type(self))
        path._pure = pure
        path._fs = self._fs
        return path

    @property
    def fs(self) -> FS:
        """The filesystem this path is on."""
        return self._fs

    # -- the pure-path API -------------------------------------------------------------

    def __truediv__(self, other: str | os.PathLike[str] | PurePath) -> PurePath:
        return self._make(self._pure / _pure(other))

    def __rtruediv__(self, other: str | os.PathLike[str]) -> PurePath:
        return self._make(_pure(other) / self._pure)

    def joinpath(self, *others: str | os.PathLike[str] | PurePath) -> PurePath:
        """This path joined with ``others``."""
        return self._make(self._pure.joinpath(*(_pure(o) for o in others)))

    def __str__(self) -> str:
        return str(self._pure)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self._pure)!r}, fs={self._fs!r})"

    def __fspath__(self) -> str:
        if not isinstance(self._fs, Local):
            raise TypeError(f"{self!r} is not on the local filesystem")
        if self._pure.is_absolute():
            return str(self._pure)
        return os.path.join(self._fs.cwd, str(self._pure))

    def as_posix(self) -> str:
        """The path with ``/`` separators."""
        return self._pure.as_posix()

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
    def parent(self) -> PurePath:
        """The path without its last component."""
        return self._make(self._pure.parent)

    @property
    def parents(self) -> tuple[PurePath, ...]:
        """The ancestors, nearest first."""
        return tuple(self._make(p) for p in self._pure.parents)

    def with_name(self, name: str) -> PurePath:
        """This path with the last component replaced by ``name``."""
        return self._make(self._pure.with_name(name))

    def with_stem(self, stem: str) -> PurePath:
        """This path with the stem of the last component replaced by ``stem``."""
        return self._make(self._pure.with_stem(stem))

    def with_suffix(self, suffix: str) -> PurePath:
        """This path with the suffix replaced by ``suffix`` (``""`` removes it)."""
        return self._make(self._pure.with_suffix(suffix))

    def relative_to(self, other: str | os.PathLike[str] | PurePath) -> PurePath:
        """This path relative to ``other``.

        Raises:
            ValueError: this path is not under ``other``.
        """
        return self._make(self._pure.relative_to(_pure(other)))

    def is_relative_to(self, other: str | os.PathLike[str] | PurePath) -> bool:
        """True when this path is under ``other``."""
        return self._pure.is_relative_to(_pure(other))

    def is_absolute(self) -> bool:
        """True when the path starts with ``/``."""
        return self._pure.is_absolute()

    def match(self, pattern: str) -> bool:
        """True when the path matches the glob ``pattern`` (from the right, as pathlib)."""
        return self._pure.match(pattern)


class Path(PurePath):
    """A path on a filesystem, with the :class:`pathlib.Path` API.

    The pure part (``/``, ``name``, ``suffix``, ``parent``, ``relative_to``, ``match``, ...)
    is that of :class:`pathlib.PurePosixPath`; the rest asks the filesystem, so the errors
    are the filesystem's own (``FileNotFoundError``, ``IsADirectoryError``, ...).

    Args:
        segments: path segments, joined as :class:`pathlib.PurePosixPath` joins them; a
            ``Path`` among them lends its filesystem when ``fs`` is not given.
        fs: the filesystem; paths are relative to its root. Default: :class:`Local` at the
            working directory.

    >>> import pfio
    >>> p = Path("data", "train.txt", fs=pfio.from_url("mem://pathdoc"))
    >>> p.write_text("hello")
    5
    >>> (p.name, p.suffix, p.parent.name, p.read_text())
    ('train.txt', '.txt', 'data', 'hello')
    """

    __slots__ = ()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Path:
        """The root of the filesystem at ``url`` (see :func:`pfio.from_url`)."""
        from ..api import from_url

        return cls(fs=from_url(url, **options))

    # -- asking the filesystem ---------------------------------------------------------

    @property
    def _path(self) -> str:
        return str(self._pure)

    def exists(self) -> bool:
        """True when the path exists."""
        return self._fs.exists(self._path)

    def is_dir(self) -> bool:
        """True when the path is an existing directory."""
        return self._fs.isdir(self._path)

    def is_file(self) -> bool:
        """True when the path is an existing file (not a directory)."""
        try:
            return not self._fs.stat(self._path).isdir()
        except (FileNotFoundError, NotADirectoryError):
            return False

    def stat(self) -> FileStat:
        """The :class:`~pfio.FileStat` of the path."""
        return self._fs.stat(self._path)

    def iterdir(self) -> Iterator[Path]:
        """The entries of this directory.

        Raises:
            FileNotFoundError: the directory does not exist.
            NotADirectoryError: the path is a file.
        """
        for name in self._fs.list(self._path):
            yield self / name.rstrip("/")

    def glob(self, pattern: str) -> Iterator[Path]:
        """The paths under this directory that match ``pattern``, sorted.

        ``*``, ``?`` and ``[...]`` match within one component; ``**`` matches any number of
        directories (none included).
        """
        for rel in self._fs.subfs(self._path).glob(pattern):
            yield self / rel

    def rglob(self, pattern: str) -> Iterator[Path]:
        """:meth:`glob` of ``"**/" + pattern``: matches at any depth."""
        return self.glob(posixpath.join("**", pattern))

    # -- changing ----------------------------------------------------------------------

    def mkdir(self, mode: int = 0o777, parents: bool = False, exist_ok: bool = False) -> None:
        """Create this directory (and its missing parents with ``parents``).

        Raises:
            FileExistsError: the path exists and ``exist_ok`` is false (or it is a file).
            FileNotFoundError: the parent is missing and ``parents`` is false.
        """
        if parents:
            self._fs.makedirs(self._path, mode, exist_ok=exist_ok)
            return
        try:
            self._fs.mkdir(self._path, mode)
        except FileExistsError:
            if not (exist_ok and self.is_dir()):
                raise

    def touch(self, mode: int = 0o666, exist_ok: bool = True) -> None:
        """Create an empty file here unless one exists (its contents are kept). ``mode`` is
        accepted as pathlib takes it; the filesystem decides the permissions.

        Raises:
            FileExistsError: the file exists and ``exist_ok`` is false.
        """
        if exist_ok and self.exists():
            return
        try:
            with self._fs.open(self._path, "xb"):
                pass
        except FileExistsError:
            if not exist_ok:
                raise

    def unlink(self, missing_ok: bool = False) -> None:
        """Remove this file.

        Raises:
            FileNotFoundError: the file does not exist and ``missing_ok`` is false.
            IsADirectoryError: the path is a directory.
        """
        try:
            if self._fs.stat(self._path).isdir():
                raise IsADirectoryError(f"{self._path!r} is a directory")
            self._fs.remove(self._path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rmdir(self) -> None:
        """Remove this directory, which must be empty.

        Raises:
            FileNotFoundError: it does not exist.
            NotADirectoryError: it is a file.
            OSError: it is not empty.
        """
        if not self._fs.stat(self._path).isdir():
            raise NotADirectoryError(f"{self._path!r} is not a directory")
        self._fs.remove(self._path)

    def rename(self, target: str | os.PathLike[str] | Path) -> Path:
        """Rename this path to ``target`` (on the same filesystem) and return the new path.

        Raises:
            ValueError: ``target`` is a :class:`Path` on another filesystem.
        """
        if isinstance(target, Path) and repr(target._fs) != repr(self._fs):
            raise ValueError(f"cannot rename {self!r} to {target!r}: another filesystem")
        new = self._make(_pure(target))
        self._fs.rename(self._path, new._path)
        return new

    replace = rename

    # -- reading and writing -----------------------------------------------------------

    def open(self, mode: str = "r", buffering: int = -1, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None) -> IO[Any]:
        """Open the file, as builtin ``open`` does (text reading by default)."""
        return self._fs.open(self._path, mode, buffering, encoding, errors, newline)

    def read_bytes(self) -> bytes:
        """The contents of the file."""
        with self._fs.open(self._path, "rb") as f:
            return f.read()

    def read_text(self, encoding: str | None = None, errors: str | None = None) -> str:
        """The contents of the file, decoded."""
        with self.open("r", encoding=encoding, errors=errors) as f:
            return f.read()

    def write_bytes(self, data: bytes) -> int:
        """Replace the contents of the file with ``data``; return its length."""
        with self._fs.open(self._path, "wb") as f:
            f.write(data)
        return memoryview(data).nbytes

    def write_text(self, data: str, encoding: str | None = None, errors: str | None = None,
                   newline: str | None = None) -> int:
        """Replace the contents of the file with ``data`` encoded; return its length."""
        with self.open("w", encoding=encoding, errors=errors, newline=newline) as f:
            return f.write(data)



def _pure(segment: str | os.PathLike[str] | PurePath) -> PurePosixPath:
    if isinstance(segment, PurePath):
        return segment._pure
    return PurePosixPath(segment)


__all__ = ["Path", "PurePath"]
