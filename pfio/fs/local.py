"""``Local``: the local filesystem (``file://`` URLs and plain paths)."""

from __future__ import annotations

import errno
import io
import logging
import os
import shutil
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from .._uri import URI, confined_name, join_confined
from ..trace import hook
from .base import FS, warn_unknown_options
from .modes import Mode

if TYPE_CHECKING:  # io's names are _io's objects; mypy 1.13's typeshed has no _io stub
    from io import DEFAULT_BUFFER_SIZE, BufferedReader, FileIO
    from io import open as _open_file
else:  # the C implementation, out of reach of patches applied to builtins.open / io.open
    from _io import DEFAULT_BUFFER_SIZE, BufferedReader, FileIO
    from _io import open as _open_file
from .stat import FileStat
from .writers import AtomicSink, atomic_writer, is_temporary_name, temporary_name

logger = logging.getLogger(__name__)

_STAT_FIELDS = (
    ("last_accessed", "st_atime"),
    ("created", "st_ctime"),
    ("last_modified_ns", "st_mtime_ns"),
    ("last_accessed_ns", "st_atime_ns"),
    ("created_ns", "st_ctime_ns"),
    ("uid", "st_uid"),
    ("gid", "st_gid"),
    ("ino", "st_ino"),
    ("dev", "st_dev"),
    ("nlink", "st_nlink"),
)


class LocalFileStat(FileStat):
    """The :class:`FileStat` of a local file: the common fields plus ``last_accessed``,
    ``created``, the ``*_ns`` times, ``uid``, ``gid``, ``ino``, ``dev`` and ``nlink``.

    Args:
        _stat: an ``os.stat_result``.
        filename: the name to report.
    """

    def __init__(self, _stat: os.stat_result, filename: str) -> None:
        extra = {name: getattr(_stat, field) for name, field in _STAT_FIELDS}
        super().__init__(filename, _stat.st_size, _stat.st_mode, _stat.st_mtime, **extra)


def binary_reader(os_path: str, reader_class: type[BufferedReader] = BufferedReader,
                  ) -> BufferedReader:
    """``open(os_path, "rb")``, the same reader a system call sooner: ``io.open`` asks the
    OS whether the file is a terminal, which decides line buffering, a thing binary files do
    not have. ``reader_class`` is the ``io.BufferedReader`` (sub)class to build."""
    raw = FileIO(os_path)
    # what io.open sizes the buffer by (a CPython attribute typeshed does not declare)
    size = raw._blksize  # type: ignore[attr-defined]
    return reader_class(raw, size if size > 1 else DEFAULT_BUFFER_SIZE)


class Local(FS):
    """The local filesystem, rooted at the directory ``cwd``.

    Args:
        cwd: the root directory; relative paths are taken from the process's working
            directory at each call. Default: the working directory.
        create: create ``cwd`` (and its parents) when it does not exist.

    Reads go straight to builtin ``open``. Files opened with ``"w"``/``"x"`` modes are written
    to a hidden temporary file beside the target (``.{name}.{random}.pfio-tmp``, never listed)
    and renamed over it on close, so readers never see a partial file and an exception inside
    the ``with`` block leaves the old file in place. The file, then its directory, are synced
    to disk before ``close`` returns, so a closed file survives a power cut. Append and update
    modes (``"a"``, ``"+"``) write in place.

    Raises:
        FileNotFoundError: ``cwd`` does not exist and ``create`` is false.
        NotADirectoryError: ``cwd`` is a file.
    """

    scheme = "file"
    validation = ("open", 0.0)  # a stat is a system call: look at every use

    def __init__(self, cwd: str | os.PathLike[str] | None = None, create: bool = False,
                 **options: Any) -> None:
        super().__init__()
        warn_unknown_options("Local", options)
        self._cwd = os.fspath(cwd) if cwd is not None else ""
        if not self._cwd:
            return
        if create:
            os.makedirs(self._cwd, exist_ok=True)
        elif not os.path.isdir(self._cwd):
            if os.path.exists(self._cwd):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._cwd)
            raise FileNotFoundError(errno.ENOENT, "no such directory", self._cwd)

    @classmethod
    def from_uri(cls, uri: URI, **options: Any) -> Local:
        """The filesystem rooted at ``uri.path``."""
        return cls(uri.path, **options)

    @classmethod
    def _open_uri(cls, uri: URI, mode: str, **kwargs: Any) -> IO[Any]:
        if not kwargs and not hook.ENABLED:  # what Local().open does, without building one
            if mode == "rb":
                return binary_reader(uri.path)
            if mode == "r":
                return _open_file(uri.path, mode)
        return cls().open(uri.path, mode, **kwargs)

    @property
    def cwd(self) -> str:
        """The root directory (the process's working directory when none was given)."""
        return self._cwd or os.getcwd()

    @cwd.setter
    def cwd(self, value: str) -> None:
        self._cwd = value

    def _root(self) -> str:
        return self._cwd

    def _set_root(self, root: str) -> None:
        self._cwd = root

    def _join_root(self, path: str) -> str:
        return self._path(path)

    def _path(self, path: str | os.PathLike[str]) -> str:
        """The OS path of ``path``: inside ``cwd`` when one was given (see
        :meth:`_confined`); as given otherwise, since a ``Local`` without ``cwd`` is the
        whole filesystem.

        Raises:
            PermissionError: ``path`` climbs out of ``cwd``.
        """
        path = os.fspath(path)
        cwd = self._cwd
        if not cwd:
            return path
        if not path.startswith("/") and ".." not in path:
            return os.path.join(cwd, path)
        return join_confined(cwd, path, self._shown_root, self._top(path))

    def _confined(self, path: str) -> str:
        """``path`` relative to ``cwd``: ``..`` may not climb above it, and an absolute
        path is that file when it is inside ``cwd`` (``/root/a/b`` given to
        ``Local(cwd="/root")`` opens ``/root/a/b``). Without ``cwd``, ``path`` as given.

        Raises:
            PermissionError: ``path`` climbs out of ``cwd``.
        """
        path = os.fspath(path)
        if not self._cwd:
            return path
        return confined_name(self._cwd, path, self._shown_root, self._top(path))

    def _top(self, path: str) -> str | None:
        """The absolute path of a relative ``cwd``, against which an absolute ``path`` is
        measured (None when there is nothing to measure)."""
        if path.startswith("/") and not self._cwd.startswith("/"):
            return os.path.abspath(self._cwd)
        return None

    def open(self, path: str, mode: str = "r", buffering: int = -1,
             encoding: str | None = None, errors: str | None = None,
             newline: str | None = None, compression: str | None = None,
             **kwargs: Any) -> IO[Any]:
        if compression is None:
            if mode == "rb" and buffering == -1:
                return binary_reader(self._path(path))
            if mode == "rb" or mode == "r":
                return _open_file(self._path(path), mode, buffering, encoding, errors, newline)
        return super().open(path, mode, buffering, encoding, errors, newline, compression,
                            **kwargs)

    # for the tracer: ``open(path, "rb")`` is ``binary_reader(self._path(path))``, so while
    # tracing it builds such files itself, as readers that count their own reads
    # (an attribute of the function: mypy knows none on a def)
    open.local_reader = (_path, binary_reader)  # type: ignore[attr-defined]

    def _open(self, path: str, mode: Mode, buffering: int, encoding: str | None,
              errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        full = self._path(path)
        if mode.kind in "wx" and not mode.plus:
            if mode.kind == "x" and os.path.lexists(full):
                raise FileExistsError(errno.EEXIST, "file exists", full)
            if os.path.isdir(full):
                raise IsADirectoryError(errno.EISDIR, "is a directory", full)
            sink = _LocalSink(full, exclusive=mode.kind == "x")
            return atomic_writer(sink, mode, buffering, encoding, errors, newline)
        return _open_file(full, mode.binary_mode if mode.binary else mode.binary_mode[:-1],
                          buffering, encoding, errors, newline)

    def _open_binary(self, path: str, mode: Mode, *args: Any, **kwargs: Any) -> IO[Any]:
        return self._open(path, Mode(mode.kind, True, mode.plus), -1, None, None, None)

    def list(self, path: str = "", recursive: bool = False,
             detail: bool = False) -> Iterator[Any]:
        top = self._path(path or ".")
        if not recursive:
            with os.scandir(top) as entries:
                for entry in entries:
                    if not is_temporary_name(entry.name):
                        yield _entry(entry, entry.name, detail)
            return
        yield from self._walk(top, "", detail)

    def _walk(self, top: str, prefix: str, detail: bool) -> Iterator[Any]:
        """Everything below ``top``, as ``os.walk`` finds it: symbolic links to directories
        are not followed (a loop would never end, a link to ``/etc`` would pull outside
        files into a copy or an archive); they are left out, with a warning."""
        with os.scandir(top) as it:
            entries = list(it)
        for entry in entries:
            if is_temporary_name(entry.name):
                continue
            name = prefix + entry.name
            if entry.is_symlink() and entry.is_dir():
                logger.warning("%s: skipped: a symbolic link to a directory (recursive "
                               "listings do not follow them)", os.path.normpath(entry.path))
                continue
            yield _entry(entry, name, detail)
            if entry.is_dir(follow_symlinks=False):
                yield from self._walk(entry.path, name + "/", detail)

    def stat(self, path: str) -> FileStat:
        full = self._path(path)
        return LocalFileStat(os.stat(full), full)

    def isdir(self, path: str) -> bool:
        return os.path.isdir(self._path(path))

    def exists(self, path: str) -> bool:
        return os.path.exists(self._path(path))

    def mkdir(self, path: str, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        os.mkdir(self._path(path), mode)

    def makedirs(self, path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        os.makedirs(self._path(path), mode, exist_ok)

    def remove(self, path: str, recursive: bool = False) -> None:
        full = self._path(path)
        if os.path.isdir(full) and not os.path.islink(full):
            if recursive:
                shutil.rmtree(full)
            else:
                os.rmdir(full)
        else:
            os.remove(full)

    def rename(self, src: str, dst: str) -> None:
        os.replace(self._path(src), self._path(dst))

    def __repr__(self) -> str:
        return f"Local(cwd={self._cwd!r})"


def _entry(entry: os.DirEntry[str], name: str, detail: bool) -> Any:
    if detail:
        try:
            return LocalFileStat(entry.stat(), name)
        except FileNotFoundError:  # a dangling symbolic link: the link itself
            return LocalFileStat(entry.stat(follow_symlinks=False), name)
    return name + "/" if entry.is_dir() else name


def sync_directory(path: str) -> None:
    """Flush the directory ``path`` to disk: makes a file renamed or linked into it durable."""
    fd = os.open(path or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _naming(target: str, error: OSError) -> OSError:
    """``error`` (met on a temporary file) as the same error about ``target``."""
    return type(error)(error.errno, error.strerror, target)


class _LocalSink(AtomicSink):
    """Writes to a hidden temporary file beside ``target``; on commit syncs it, renames it
    over ``target`` (with ``exclusive``, fails if ``target`` appeared meanwhile) and syncs the
    directory. Errors name ``target``."""

    def __init__(self, target: str, exclusive: bool = False) -> None:
        super().__init__(target)
        self._directory, base = os.path.split(target)
        self._tmp = os.path.join(self._directory, temporary_name(base))
        self._exclusive = exclusive
        try:
            fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            io.RawIOBase.close(self)  # nothing to discard: closed as it is
            raise _naming(target, exc) from None
        self._file = io.FileIO(fd, "wb", closefd=True)

    def _write(self, b: Any) -> int:
        return self._file.write(b)

    def fileno(self) -> int:
        return self._file.fileno()

    def _commit(self) -> None:
        try:
            os.fsync(self._file.fileno())
            self._file.close()
            if self._exclusive:
                os.link(self._tmp, self.name)
                os.unlink(self._tmp)
            else:
                os.replace(self._tmp, self.name)
        except OSError as exc:
            raise _naming(self.name, exc) from None
        sync_directory(self._directory)

    def _discard(self) -> None:
        self._file.close()
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass
