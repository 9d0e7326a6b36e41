"""What zip and tar archives have in common: a name index, a backing file, member lifetimes.

An archive is a read-mostly filesystem whose bytes come from one file opened on another
filesystem (any backend, or a member of another archive). The name index
(:mod:`pfio.containers.names`) is built once, when the archive is opened: ``exists``,
``stat`` and ``isdir`` are dictionary look-ups and listing a directory costs the size of
that directory. No name a member has or a user gives reaches outside the archive.
"""

from __future__ import annotations

import errno
import io
import os
import posixpath
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import IO, Any

from .._uri import confined_name
from ..errors import MemberNotFoundError
from ..fs.base import FS
from ..fs.modes import Mode
from ..fs.positional import PositionalReader
from ..fs.stat import FileStat
from .names import ArchiveIndex, Entry, clean_name

__all__ = ["ArchiveFS"]


class _BackingFile:
    """The backing file of an archive in one process, shared by the archive and the views
    :meth:`ArchiveFS.subfs` makes of it: the open file, its positional reader, how many
    member files (streams) are open, and whether closing waits for them."""

    __slots__ = ("pid", "lock", "file", "reads", "open_members", "release_pending")

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.RLock()
        self.file: IO[bytes] | None = None
        self.reads: PositionalReader | None = None
        self.open_members = 0
        self.release_pending = False


class ArchiveFS(FS):
    """Base of :class:`~pfio.containers.zip.Zip` and :class:`~pfio.containers.tar.Tar`.

    Subclasses implement :meth:`_build_index` and :meth:`_open_member` (and, for archives
    that can be written, :meth:`_open_writer`).

    The backing file is opened lazily in each process (after fork or unpickling it is opened
    again). ``close`` releases it, but not before every member file opened from the archive
    is closed. With ``owns_backing_fs`` set (as :func:`pfio.from_url` does), closing the
    archive closes the filesystem it was opened on too.
    """

    #: options of the backend's ``open`` for the backing file (hints that other backends
    #: ignore, such as where S3's opening request reads)
    backing_open_options: dict[str, Any] = {}

    def __init__(self, backend: FS, file_path: str, mode: str = "r") -> None:
        super().__init__()
        if mode not in ("r", "w"):
            raise ValueError(f"archive mode must be 'r' or 'w', not {mode!r}")
        self.backend = backend
        self.file_path = file_path
        self.mode = mode
        self._label = self.name  # for messages, computed once
        self.root = ""
        self.owns_backing_fs = False
        #: the options :func:`pfio.v2.from_url` was given (PFIO 2.x's ``Zip.kwargs``)
        self.kwargs: dict[str, Any] = {}
        self._io = _BackingFile()
        self._index: ArchiveIndex | None = None
        self._closed = False
        #: the writer of an archive open for writing (``add_dir``, ``close``, ``abandon``)
        self._writer: Any = None

    # -- state across processes ---------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        if self.mode != "r":
            raise TypeError(f"an archive open for writing cannot be pickled: {self!r}")
        state = self.__dict__.copy()
        state["_io"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._io = _BackingFile()
        self._pid = os.getpid()

    def _state(self) -> _BackingFile:
        """This process's backing-file state (a fresh one in a child process)."""
        state = self._io
        if state.pid != os.getpid():
            state = self._io = _BackingFile()
        return state

    def _backing(self) -> IO[bytes]:
        """The backing file of this process, opened on first use."""
        state = self._state()
        if self._closed and state.open_members <= 0:  # open members keep reading
            raise ValueError(f"I/O operation on a closed archive: {self.name}")
        f = state.file
        if f is None:
            with state.lock:
                f = state.file
                if f is None:
                    f = state.file = self.backend.open(self.file_path, "rb",
                                                       **self.backing_open_options)
        return f

    def _reads(self) -> PositionalReader:
        """Positional reads of this process's backing file."""
        f = self._backing()
        state = self._io
        reads = state.reads
        if reads is None or reads.file is not f:
            reads = state.reads = PositionalReader(f)
        return reads

    def _read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` of the backing file (one ranged request on S3,
        ``os.pread`` on a local file), from any thread. While it runs, a release waits."""
        self._member_opened()
        try:
            return self._reads().read_at(offset, size)
        finally:
            self._member_closed()

    def _read_tail(self, size: int) -> tuple[int, bytes]:
        """The last ``size`` bytes of the backing file and the offset they start at (one
        suffix-range request on S3)."""
        self._member_opened()
        try:
            return self._reads().read_tail(size)
        finally:
            self._member_closed()

    @property
    def index(self) -> ArchiveIndex:
        """The name index, built on first use."""
        if self._index is None:
            with self._state().lock:
                if self._index is None:
                    self._index = self._build_index()
        return self._index

    @property
    def name(self) -> str:
        """A readable name of the archive: its backing filesystem and path."""
        return self.backend._describe(self.file_path)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, mode={self.mode!r})"

    # -- member lifetimes ---------------------------------------------------------------

    def _member_opened(self) -> None:
        """A member file (or one read) starts using the backing file: a release waits for
        it. A closed archive refuses, unless members opened before are still reading."""
        state = self._state()
        with state.lock:
            if self._closed and state.open_members <= 0:
                raise ValueError(f"I/O operation on a closed archive: {self.name}")
            state.open_members += 1

    def _member_closed(self) -> None:
        state = self._state()
        with state.lock:
            state.open_members -= 1
            if state.release_pending and state.open_members <= 0:
                self._release()

    def close(self) -> None:
        """Close the archive: an archive open for writing is published; the backing file
        is closed once every member file opened from it is closed. A view made by
        :meth:`subfs` shares the backing file: closing either releases it, and the other
        opens it again if it is used."""
        with self._state().lock:
            if self._closed:
                return
            self._finish_writing()
            self._closed = True
            self.release()

    def release(self) -> None:
        """Close the backing file (at once, or when the last member file opened from it is
        closed) but keep the archive usable: its index stays, and the backing file is opened
        again on the next read. Shared archives are released so when they are evicted."""
        state = self._state()
        with state.lock:
            if state.open_members <= 0:
                self._release()
            else:
                state.release_pending = True

    def _release(self) -> None:
        state = self._io
        if state.file is not None and state.pid == os.getpid():
            state.file.close()
        state.file = state.reads = None
        state.release_pending = False
        if self.owns_backing_fs:
            self.backend.close()

    # -- identity and views -------------------------------------------------------------

    #: a member changes only when the archive file does, which its backing filesystem's
    #: policy watches (see :mod:`pfio.fs.resolver`)
    validation = ("never", 0.0)

    def identity(self, path: str) -> str:
        """The archive file's identity on its backing filesystem, then ``!/`` and the
        member name."""
        return f"{self.backend.identity(self.file_path)}!/{self._key(path)}"

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def fileobj(self) -> IO[bytes]:
        """The archive's backing file, opened on its filesystem (PFIO 2.x's attribute)."""
        return self._backing()

    # -- names --------------------------------------------------------------------------

    def _key(self, path: str) -> str:
        """The member name of ``path``, without empty or ``.`` components: ``"a//b/"`` is
        ``"a/b"``.

        At the archive's top, a name is taken as the names stored in archives are (see
        :mod:`pfio.containers.names`): ``..`` at the top stays there and a leading ``/`` is
        the top, so a member stored as ``../x`` (read as ``x``, with a warning) opens as
        ``../x`` too, as :mod:`zipfile` opens it; nothing is ever outside the archive. A
        view made by :meth:`subfs` confines names as every filesystem does (see
        :meth:`FS.subfs`): an absolute name is measured from the archive's top.

        Raises:
            PermissionError: in a view, ``path`` climbs out of the view's root.
        """
        inside = self._confined(path)
        return f"{self.root}/{inside}" if self.root and inside else inside or self.root

    def _confined(self, path: str) -> str:
        """``path`` relative to the view's root, as :meth:`_key` takes it."""
        path = os.fspath(path)
        if not self.root:
            return clean_name(path)
        return clean_name(confined_name(self.root, path, self._shown_root))

    def _shown_root(self) -> str:
        """The view's root as errors name it: the archive, then the root inside it."""
        return f"{self.name}/{self.root}" if self.root else self.name

    def _entry(self, path: str) -> Entry:
        key = self._key(path)
        entry = self.index.entries.get(key)
        if entry is None:
            raise MemberNotFoundError(self.name, key)
        return entry

    def stat(self, path: str) -> FileStat:
        entry = self._entry(path)
        return self._stat(entry, entry.name)

    def _stat(self, entry: Entry, filename: str) -> FileStat:
        return FileStat(filename, entry.size, entry.mode, entry.mtime)

    def exists(self, path: str) -> bool:
        return self._key(path) in self.index.entries

    def isdir(self, path: str) -> bool:
        entry = self.index.entries.get(self._key(path))
        return entry is not None and entry.is_dir

    #: ``list`` names directories with a trailing ``/`` (as ``Local`` and ``S3`` do)
    list_marks_directories = True

    def list(self, path: str = "", recursive: bool = False,
             detail: bool = False) -> Iterator[Any]:
        """The names (or, with ``detail``, the :class:`FileStat`) of the directory ``path``,
        relative to it; with ``recursive``, of everything below it.

        Raises:
            FileNotFoundError: ``path`` does not exist.
            NotADirectoryError: ``path`` is a file.
        """
        entry = self._directory(path)
        mark = "/" if self.list_marks_directories else ""
        implied = not recursive or self.list_implied_directories
        for name, child in self._walk(entry.name, "", recursive):
            if implied or self._explicit(child):
                if detail:
                    yield self._stat(child, name)
                else:
                    yield name + mark if child.is_dir else name

    def _walk(self, key: str, prefix: str, recursive: bool) -> Iterator[tuple[str, Entry]]:
        """``(name relative to key, entry)`` of the children of directory ``key`` (and, with
        ``recursive``, of everything below it), directories before their contents."""
        for base, child in self.index.children.get(key, {}).items():
            name = prefix + base
            yield name, child
            if recursive and child.is_dir:
                yield from self._walk(child.name, name + "/", True)

    def _explicit(self, entry: Entry) -> bool:
        """True when the archive has a member for ``entry`` (a directory may exist only
        because members' names imply it)."""
        return True

    def _entries(self, path: str, recursive: bool = False) -> Iterator[tuple[str, bool]]:
        """Every name below the directory ``path`` (implied directories included) and
        whether it is a directory, from the index."""
        for name, child in self._walk(self._directory(path).name, "", recursive):
            yield name, child.is_dir

    def _directory(self, path: str) -> Entry:
        """The entry of the directory ``path``.

        Raises:
            FileNotFoundError: ``path`` does not exist.
            NotADirectoryError: ``path`` is a file.
        """
        entry = self._entry(path)
        if not entry.is_dir:
            raise NotADirectoryError(errno.ENOTDIR, "not a directory",
                                     f"{self.name}/{entry.name}")
        return entry

    # -- files --------------------------------------------------------------------------

    def _open_binary(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        if self._writer is not None:
            return self._open_for_writing(path, mode, buffering, encoding, errors, newline,
                                          **kwargs)
        if mode.kind == "r" and not mode.plus:
            entry = self._entry(path)
            if entry.is_dir:
                raise IsADirectoryError(errno.EISDIR, "is a directory",
                                        f"{self._label}/{entry.name}")
            return self._open_member(entry, buffering)
        raise io.UnsupportedOperation(f"archive {self._label} is open for reading; members "
                                      f"cannot be opened in mode {mode.binary_mode!r}")

    def _open_for_writing(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                          errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        if mode.kind == "r" and not mode.plus:
            raise io.UnsupportedOperation(f"archive {self._label} is open for writing; its "
                                          "members cannot be read")
        if mode.kind not in "wx" or mode.plus:
            raise io.UnsupportedOperation(f"archive {self._label} is open for writing; members "
                                          f"cannot be opened in mode {mode.binary_mode!r}")
        return self._open_writer(self._new_key(path), mode, buffering, encoding, errors,
                                 newline, **kwargs)

    def _build_index(self) -> ArchiveIndex:
        raise NotImplementedError

    def _open_member(self, entry: Entry, buffering: int) -> IO[bytes]:
        """A reader of member ``entry`` (read mode)."""
        raise NotImplementedError

    def _open_writer(self, key: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        """A writer of the new member ``key`` (write mode; text or binary as ``mode``)."""
        raise NotImplementedError

    def _finish_writing(self) -> None:
        """Write what an archive open for writing still owes (its directory) and publish it."""
        if self._writer is not None:
            self._writer.close()

    def _new_key(self, path: str) -> str:
        """The key of a new member or directory at ``path`` (write mode), after checking that
        the name is free and that no file stands where a parent directory should be.

        Raises:
            IsADirectoryError: ``path`` is the top or a directory.
            FileExistsError: a member ``path`` was written already.
            NotADirectoryError: a parent of ``path`` is a file.
        """
        key = self._key(path)
        entries = self.index.entries
        where = f"{self.name}/{key}"
        existing = entries.get(key)
        if not key or existing is not None and existing.is_dir:
            raise IsADirectoryError(errno.EISDIR, "is a directory", where)
        if existing is not None:
            raise FileExistsError(errno.EEXIST, "an archive member cannot be replaced", where)
        parent = posixpath.dirname(key)
        while parent:
            entry = entries.get(parent)
            if entry is not None:
                if not entry.is_dir:
                    raise NotADirectoryError(errno.ENOTDIR, "not a directory",
                                             f"{self.name}/{parent}")
                break
            parent = posixpath.dirname(parent)
        return key

    def _new_dir_key(self, path: str) -> str:
        """The key of a new directory at ``path`` (write mode), as ``mkdir`` checks it.

        Raises:
            FileExistsError: ``path`` exists.
            FileNotFoundError: the parent directory does not exist.
            NotADirectoryError: a parent of ``path`` is a file.
        """
        key = self._key(path)
        if key in self.index.entries:
            raise FileExistsError(errno.EEXIST, "file exists", f"{self.name}/{key}")
        key = self._new_key(path)
        parent = posixpath.dirname(key)
        if parent not in self.index.entries:
            raise FileNotFoundError(errno.ENOENT, "no such directory", f"{self.name}/{parent}")
        return key

    def _read_only(self, operation: str) -> io.UnsupportedOperation:
        return io.UnsupportedOperation(f"{operation}: archive {self._label} is read-only")

    def mkdir(self, path: str, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        """Add a directory entry (write mode); its parent must exist.

        Raises:
            FileExistsError: ``path`` exists.
            FileNotFoundError: the parent directory does not exist.
            io.UnsupportedOperation: the archive is open for reading.
        """
        if self._writer is None:
            raise self._read_only("mkdir")
        self._writer.add_dir(self._new_dir_key(path))

    def makedirs(self, path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        if self._writer is not None:
            FS.makedirs(self, path, mode, exist_ok)
        elif not (exist_ok and self.isdir(path)):
            raise self._read_only("makedirs")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None and self._writer is not None:
            self._writer.abandon()  # an archive whose writing failed is not published
        self.close()

    def remove(self, path: str, recursive: bool = False) -> None:
        raise self._read_only("remove")

    def rename(self, src: str, dst: str) -> None:
        raise self._read_only("rename")
