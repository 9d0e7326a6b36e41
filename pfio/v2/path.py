""":class:`Path`: a :mod:`pathlib`-like path on any pfio filesystem."""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import IO, Any

from ..errors import os_error_args
from ..fs.stat import FileStat
from .pure_path import PurePath, pure_of


class Path(PurePath):
    """A path on a filesystem, with the :class:`pathlib.Path` API.

    The pure part (``/``, ``name``, ``suffix``, ``parent``, ``relative_to``, ``match``, ...)
    is that of :class:`pathlib.PurePosixPath`; the rest asks the filesystem, so the errors
    are the filesystem's own (``FileNotFoundError``, ``IsADirectoryError``, ...).

    Args:
        segments: path segments, joined as :class:`pathlib.PurePosixPath` joins them; a
            ``Path`` among them lends its filesystem when ``fs`` is not given.
        fs: the filesystem; paths are relative to its root, and a leading ``/`` is its
            root too (as in PFIO 2.x). Default: :class:`Local` at the working directory.

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
        return self._in_fs

    def exists(self, *, follow_symlinks: bool = True) -> bool:
        """True when the path exists.

        Raises:
            NotImplementedError: ``follow_symlinks`` is false (pfio has no links).
        """
        _no_links(follow_symlinks)
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

    def stat(self, *, follow_symlinks: bool = True) -> FileStat:
        """The :class:`~pfio.FileStat` of the path.

        Raises:
            NotImplementedError: ``follow_symlinks`` is false (pfio has no links).
        """
        _no_links(follow_symlinks)
        return self._fs.stat(self._path)

    def absolute(self) -> Path:
        """This path anchored at the filesystem's root: ``/`` + the path."""
        if self._pure.is_absolute():
            return self
        return self._make(PurePosixPath("/") / self._pure)

    def resolve(self, strict: bool = False) -> Path:
        """:meth:`absolute`, with ``.`` and ``..`` components resolved (there are no
        links to follow).

        Raises:
            FileNotFoundError: ``strict`` and the path does not exist.
        """
        resolved = self._make(PurePosixPath(posixpath.normpath(self.absolute()._pure)))
        if strict and not resolved.exists():
            raise FileNotFoundError(errno.ENOENT, "no such file or directory",
                                    self._fs._describe(self._path))
        return resolved

    def iterdir(self) -> Iterator[Path]:
        """The entries of this directory.

        Raises:
            MissingDirectoryError: the directory does not exist (a ``FileNotFoundError``,
                as pathlib raises, and a ``NotADirectoryError``, as PFIO 2.x raised).
            NotADirectoryError: the path is a file.
        """
        try:
            names = self._fs.list(self._path)
            first = next(names, None)
        except FileNotFoundError as exc:
            raise MissingDirectoryError(*os_error_args(exc)) from exc
        if first is not None:
            yield self / first.rstrip("/")
            for name in names:
                yield self / name.rstrip("/")

    def glob(self, pattern: str, *, case_sensitive: bool | None = None) -> Iterator[Path]:
        """The paths under this directory that match ``pattern``, sorted.

        ``*``, ``?`` and ``[...]`` match within one component; ``**`` matches any number of
        directories (none included).

        Raises:
            NotImplementedError: ``case_sensitive`` is given (as in PFIO 2.x).
        """
        if case_sensitive is not None:
            raise NotImplementedError("Path.glob(case_sensitive=...) is not supported: "
                                      "each filesystem matches names its own way")
        # FS.glob's "list[str]" reads ``list`` as the method FS.list (pfio/fs/base.py)
        for rel in self._fs.subfs(self._path).glob(pattern):
            yield self / rel

    def rglob(self, pattern: str, *, case_sensitive: bool | None = None) -> Iterator[Path]:
        """:meth:`glob` of ``"**/" + pattern``: matches at any depth."""
        return self.glob(posixpath.join("**", pattern), case_sensitive=case_sensitive)

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

        On a filesystem whose directories exist only through their files (S3), removing a
        directory that is not there does nothing, as :meth:`mkdir` made nothing.

        Raises:
            MissingDirectoryError: it does not exist (a ``FileNotFoundError``, as pathlib
                raises, and a ``NotADirectoryError``, as PFIO 2.x raised).
            NotADirectoryError: it is a file.
            OSError: it is not empty.
        """
        try:
            is_dir = self._fs.stat(self._path).isdir()
        except FileNotFoundError as exc:
            if self._fs.implicit_directories:
                return  # gone with its last file; ``mkdir`` made nothing (as PFIO 2.x)
            raise MissingDirectoryError(*os_error_args(exc)) from exc
        if not is_dir:
            raise NotADirectoryError(errno.ENOTDIR, "not a directory",
                                     self._fs._describe(self._path))
        self._fs.remove(self._path)

    def rename(self, target: str | os.PathLike[str] | Path) -> Path:
        """Rename this path to ``target`` (on the same filesystem) and return the new path.

        Raises:
            ValueError: ``target`` is a :class:`Path` on another filesystem.
        """
        if isinstance(target, Path) and repr(target._fs) != repr(self._fs):
            raise ValueError(f"cannot rename {self!r} to {target!r}: another filesystem")
        new = self._make(pure_of(target))
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
            data: bytes = f.read()
            return data

    def read_text(self, encoding: str | None = None, errors: str | None = None) -> str:
        """The contents of the file, decoded."""
        with self.open("r", encoding=encoding, errors=errors) as f:
            text: str = f.read()
            return text

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


    # -- what pfio's filesystems do not have (PFIO 2.x raised the same) ----------------

    @classmethod
    def cwd(cls) -> Path:
        """Not supported: a filesystem has no working directory (see :meth:`absolute`)."""
        raise _unsupported("Path.cwd")

    @classmethod
    def home(cls) -> Path:
        """Not supported: a filesystem has no home directory."""
        raise _unsupported("Path.home")

    def expanduser(self) -> Path:
        """Not supported."""
        raise _unsupported("Path.expanduser")

    def chmod(self, *, mode: int, follow_symlinks: bool = True) -> None:
        """Not supported: pfio has no permissions API."""
        raise _unsupported("Path.chmod")

    def lchmod(self, mode: int) -> None:
        """Not supported."""
        raise _unsupported("Path.lchmod")

    def lstat(self) -> FileStat:
        """Not supported: pfio has no links (use :meth:`stat`)."""
        raise _unsupported("Path.lstat")

    def owner(self) -> str:
        """Not supported."""
        raise _unsupported("Path.owner")

    def group(self) -> str:
        """Not supported."""
        raise _unsupported("Path.group")

    def samefile(self, other_path: str | os.PathLike[str] | Path) -> bool:
        """Not supported (as in PFIO 2.x): compare :meth:`resolve` of the two paths."""
        raise _unsupported("Path.samefile")

    def readlink(self) -> Path:
        """Not supported: pfio has no links."""
        raise _unsupported("Path.readlink")

    def symlink_to(self, target: str | os.PathLike[str], target_is_directory: bool = False
                   ) -> None:
        """Not supported: pfio has no links."""
        raise _unsupported("Path.symlink_to")

    def hardlink_to(self, target: str | os.PathLike[str]) -> None:
        """Not supported: pfio has no links."""
        raise _unsupported("Path.hardlink_to")

    def walk(self, top_down: bool = True, on_error: Any = None,
             follow_symlinks: bool = False) -> Iterator[Any]:
        """Not supported (use :meth:`rglob` or ``fs.list(recursive=True)``)."""
        raise _unsupported("Path.walk")

    def is_symlink(self) -> bool:
        """Not supported: pfio has no links."""
        raise _unsupported("Path.is_symlink")

    def is_junction(self) -> bool:
        """Not supported."""
        raise _unsupported("Path.is_junction")

    def is_mount(self) -> bool:
        """Not supported."""
        raise _unsupported("Path.is_mount")

    def is_socket(self) -> bool:
        """Not supported."""
        raise _unsupported("Path.is_socket")

    def is_fifo(self) -> bool:
        """Not supported."""
        raise _unsupported("Path.is_fifo")

    def is_block_device(self) -> bool:
        """Not supported."""
        raise _unsupported("Path.is_block_device")

    def is_char_device(self) -> bool:
        """Not supported."""
        raise _unsupported("Path.is_char_device")


class MissingDirectoryError(FileNotFoundError, NotADirectoryError):
    """:meth:`Path.iterdir` or :meth:`Path.rmdir` of a path where nothing is: pathlib's
    ``FileNotFoundError`` that is also the ``NotADirectoryError`` PFIO 2.x raised."""


def _unsupported(name: str) -> NotImplementedError:
    return NotImplementedError(f"{name} is not supported on pfio filesystems")


def _no_links(follow_symlinks: bool) -> None:
    if not follow_symlinks:
        raise _unsupported("follow_symlinks=False")



__all__ = ["MissingDirectoryError", "Path", "PurePath"]
