"""The filesystem API that every backend and container implements.

A filesystem (``FS``) is rooted somewhere (a local directory, an S3 prefix, a zip file) and
takes paths relative to that root. Errors are builtin exception classes everywhere:
``FileNotFoundError``, ``FileExistsError``, ``IsADirectoryError``, ``NotADirectoryError``,
``PermissionError`` and ``io.UnsupportedOperation``.
"""

from __future__ import annotations

import abc
import builtins
import errno
import functools
import io
import os
import posixpath
import warnings
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, ClassVar, TypeVar

from .. import registry
from .._uri import confined_name, join_confined, without_userinfo
from ..trace import hook
from ..trace.ppe import Profilable, Tag
from .globbing import walk
from .modes import Mode, parse_mode
from .stat import FileStat
from .writers import text_reader

if TYPE_CHECKING:
    from ..containers.tar import Tar
    from ..containers.zip import Zip


_FS = TypeVar("_FS", bound="FS")


class FS(Profilable, abc.ABC):
    """A filesystem: files and directories under a root.

    Subclasses implement :meth:`_open_binary`, :meth:`list`, :meth:`stat`, :meth:`mkdir`,
    :meth:`remove` and :meth:`rename`; the rest has working defaults that a backend may
    override with something faster.

    FS objects are context managers (``close`` on exit), can be pickled, and can be used in
    a process created by fork, spawn or forkserver: per-process resources (connections, open
    backing files) are recreated lazily in the new process.

    Made with ``trace=True`` (PFIO 2.x's option), a filesystem records its calls, and the
    reads and writes of the files it opens, in pytorch-pfn-extras' profiler under PFIO 2.x's
    names (``pfio.v2.Local:open``, ...): see :mod:`pfio.trace.ppe`.
    """

    # what ``trace=True`` records (see pfio.trace.ppe): pfio.v2.<class name>:<operation>
    _ppe_operations: ClassVar[dict[str, Tag]] = {
        name: name for name in ("open", "list", "stat", "isdir", "exists", "glob", "mkdir",
                                "makedirs", "remove", "rename", "close")}
    _ppe_files = frozenset({"open"})
    _ppe_listings = frozenset({"list"})

    @classmethod
    def _ppe_tag_prefix(cls) -> str | None:
        return cls._ppe_prefix or f"pfio.v2.{cls.__name__}"

    #: the URL scheme this filesystem serves
    scheme: str = ""

    #: how a reader that keeps something opened from this filesystem (an archive shared by
    #: :mod:`pfio.fs.resolver`) notices that the file changed: ``("never", 0)``, on every
    #: use (``("open", 0)``), or at most every ``ttl`` seconds (``("ttl", ttl)``)
    validation: tuple[str, float] = ("ttl", 10.0)

    #: True where a directory exists only through the files under it (S3 prefixes):
    #: ``mkdir`` makes nothing, and a directory whose last file is removed is gone
    implicit_directories: bool = False

    #: False where a recursive ``list`` names the files (S3 keys, zip members) and not the
    #: directories that only the names below them imply, as PFIO 2.x listed them (code that
    #: walks any filesystem adds them with :func:`pfio.fs.stat.with_implied_directories`)
    list_implied_directories: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hook.fs_class_created(cls)  # the tracer times its methods while it is enabled

    def __init__(self) -> None:
        self._pid = os.getpid()

    # -- opening files -------------------------------------------------------------------

    def open(
        self,
        path: str,
        mode: str = "r",
        buffering: int = -1,
        encoding: str | None = None,
        errors: str | None = None,
        newline: str | None = None,
        compression: str | None = None,
        **kwargs: Any,
    ) -> IO[Any]:
        """Open the file at ``path``.

        Args:
            path: path relative to this filesystem's root.
            mode: as for builtin ``open``: ``"r"`` (text, the default, as for builtin
                ``open`` and PFIO 2.x), ``"rb"`` (bytes), ``"wb"``, ``"w"``, ``"ab"``,
                ``"xb"``, ... Which modes work depends on the backend; one it cannot do
                raises ``io.UnsupportedOperation``.
            buffering, encoding, errors, newline: as for builtin ``open``.
            compression: ``None`` (the default: bytes as stored), ``"infer"`` (from the file
                name's extension, and for reads from the magic bytes too), or a codec name:
                ``"gzip"``, ``"bz2"``, ``"xz"``, ``"zstd"``. See :mod:`pfio.compression`.
            kwargs: backend-specific options.

        Writes are all-or-nothing: the file appears under ``path`` when it is closed, and not
        at all if the ``with`` block that wrote it raised.

        Raises:
            FileNotFoundError: reading a missing file.
            IsADirectoryError: ``path`` is a directory.
            io.UnsupportedOperation: the backend cannot open files in ``mode``.
        """
        parsed = parse_mode(mode)
        if parsed.binary and (encoding is not None or errors is not None or newline is not None):
            raise ValueError("binary mode doesn't take an encoding, errors or newline argument")
        if compression is not None:
            from ..compression import open_compressed

            compresslevel = kwargs.pop("compresslevel", None)
            return open_compressed(functools.partial(self._open, path, **kwargs), path,
                                   self._describe(path), parsed, compression, buffering,
                                   encoding, errors, newline, compresslevel)
        return self._open(path, parsed, buffering, encoding, errors, newline, **kwargs)

    def _open(
        self,
        path: str,
        mode: Mode,
        buffering: int,
        encoding: str | None,
        errors: str | None,
        newline: str | None,
        **kwargs: Any,
    ) -> IO[Any]:
        binary = self._open_binary(path, mode, buffering, encoding, errors, newline, **kwargs)
        if mode.binary or isinstance(binary, io.TextIOBase):
            return binary
        return text_reader(binary, encoding, errors, newline)

    @abc.abstractmethod
    def _open_binary(
        self,
        path: str,
        mode: Mode,
        buffering: int,
        encoding: str | None,
        errors: str | None,
        newline: str | None,
        **kwargs: Any,
    ) -> IO[Any]:
        """Open ``path`` in the binary form of ``mode``.

        A writer may return a text file object itself (see
        :func:`pfio.fs.writers.atomic_writer`); a binary reader is wrapped for text by
        :meth:`_open`.
        """

    # -- inspecting ----------------------------------------------------------------------

    @abc.abstractmethod
    def list(
        self, path: str = "", recursive: bool = False, detail: bool = False
    ) -> Iterator[Any]:
        """List the directory at ``path``.

        Yields names relative to ``path``; in a non-recursive listing directory names end
        with ``/`` (as ``ls -F`` shows them). With ``recursive=True`` everything below
        ``path`` is listed, directories included (with ``/``), except, where
        :attr:`list_implied_directories` is false (S3, zip), the directories that only the
        names below them imply. With ``detail=True`` :class:`FileStat` objects are yielded
        instead of names, their ``filename`` being the name without the trailing ``/``. (A
        zip archive lists as PFIO 2.x's ``Zip`` did: directory names without ``/``.)

        Raises:
            FileNotFoundError: ``path`` does not exist.
            NotADirectoryError: ``path`` is a file.
        """

    @abc.abstractmethod
    def stat(self, path: str) -> FileStat:
        """Return the :class:`FileStat` of ``path``.

        Raises:
            FileNotFoundError: ``path`` does not exist.
        """

    def isdir(self, path: str) -> bool:
        """True when ``path`` is an existing directory."""
        try:
            return self.stat(path).isdir()
        except (FileNotFoundError, NotADirectoryError):
            return False

    def exists(self, path: str) -> bool:
        """True when ``path`` exists, as a file or as a directory."""
        try:
            self.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    def glob(self, pattern: str) -> builtins.list[str]:
        """Return the paths (relative to the root) matching ``pattern``, sorted.

        ``*``, ``?`` and ``[...]`` match within one path component (dot files included);
        ``**`` as a whole component matches any number of directories, none included.
        Directories are returned without a trailing ``/``. The pattern is confined to the
        root as every name is (see :meth:`subfs`): one that climbs out of it raises
        :class:`PermissionError`.
        """
        inside = self._confined(pattern)
        parts = [p for p in inside.split("/") if p not in ("", ".")]
        if not parts:
            return []
        return sorted(set(walk(self, "/" if inside.startswith("/") else "", parts)))

    def _entries(self, path: str, recursive: bool = False) -> Iterator[tuple[str, bool]]:
        """``(name, is_dir)`` of what ``list(path, recursive)`` names, the name without a
        trailing ``/``. A filesystem whose listing does not mark directories with ``/``
        overrides this."""
        for name in self.list(path, recursive=recursive):
            yield (name[:-1], True) if name.endswith("/") else (name, False)

    # -- changing ------------------------------------------------------------------------

    @abc.abstractmethod
    def mkdir(self, path: str, mode: int = 0o777) -> None:
        """Create the directory ``path``; its parent must exist.

        Raises:
            FileExistsError: ``path`` exists.
            FileNotFoundError: the parent directory does not exist.
        """

    def makedirs(self, path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        """Create ``path`` and any missing parent directories.

        Raises:
            FileExistsError: ``path`` exists and ``exist_ok`` is false, or it is a file.
        """
        if self.exists(path):
            if exist_ok and self.isdir(path):
                return
            raise FileExistsError(errno.EEXIST, "file exists", self._describe(path))
        parent = posixpath.dirname(path.rstrip("/"))
        if parent and parent != path:
            self.makedirs(parent, mode, exist_ok=True)
        try:
            self.mkdir(path, mode)
        except FileExistsError:
            if not (exist_ok and self.isdir(path)):
                raise

    @abc.abstractmethod
    def remove(self, path: str, recursive: bool = False) -> None:
        """Remove the file or directory at ``path``.

        A directory must be empty unless ``recursive`` is true.

        Raises:
            FileNotFoundError: ``path`` does not exist.
            OSError: the directory is not empty (``errno.ENOTEMPTY``).
        """

    @abc.abstractmethod
    def rename(self, src: str, dst: str) -> None:
        """Rename ``src`` to ``dst`` (replacing a file at ``dst``).

        Raises:
            FileNotFoundError: ``src`` does not exist.
        """

    def copy(self, src: str, dst: str) -> None:
        """Copy the file ``src`` to ``dst`` on this filesystem (replacing a file at ``dst``).

        The copy is all-or-nothing, as every write is: ``dst`` appears when it is complete,
        and an error part-way leaves no file there (nor a changed one). A filesystem that
        can copy without moving the bytes through this process (S3: a server-side copy)
        does; the others stream the file in large chunks. Copying a file onto itself
        changes nothing. The parent directory of ``dst`` must exist (S3 and HDFS need
        none); to copy directories, or between filesystems, see :func:`pfio.copy` and
        :func:`pfio.sync`.

        Raises:
            FileNotFoundError: ``src`` does not exist, or the parent of ``dst`` does not.
            IsADirectoryError: ``src`` or ``dst`` is a directory.
        """
        if not self._copy_from(self, src, dst):
            stream_copy(self, src, self, dst)

    def _copy_from(self, source: FS, src: str, dst: str, size: int | None = None) -> bool:
        """Copy the file ``src`` of ``source`` to ``dst`` on this filesystem without moving
        its bytes through this process, when this filesystem can (an S3 server-side copy
        between buckets of one endpoint and one set of credentials); return False when it
        cannot, having done nothing. ``size``, when known (from a listing), saves a look at
        the source. Errors are those of :meth:`copy`."""
        return False

    # -- identity ------------------------------------------------------------------------

    def identity(self, path: str) -> str:
        """A string naming the data of ``path`` and who may read it: two paths (of any two
        filesystems) with equal identities hold the same bytes for the same reader. Caches
        key their entries by it; it never contains a secret.

        The default is the path's URL (absolute for local files); backends add what else
        tells their data apart (S3: endpoint and credentials; archives: the archive's
        identity and the member).
        """
        described = self._describe(path)
        if self.scheme in ("", "file"):
            return "file://" + os.path.abspath(described)
        return described

    # -- views and containers ------------------------------------------------------------

    def subfs(self, path: str) -> FS:
        """A filesystem rooted at ``path`` under this one: a view that shares this one's
        per-process state (connections, thread pools, open backing files); whether ``path``
        exists is not checked.

        No name given to a filesystem with a root, to a view of it, or to ``subfs`` itself
        reaches outside that root (see :func:`pfio._uri.confined_name`): a relative name is
        taken from the root and ``..`` may not climb above it; an absolute name (a leading
        ``/``, from the top of the local filesystem, the bucket, the ``mem://`` store, the
        HDFS namespace or the archive) inside the root is that file. A name that climbs out
        raises :class:`PermissionError` naming it and the root, and nothing is read or
        written: ``fs.subfs("d").open("../x", "w")`` is refused, never written to ``d/x``.
        """
        sub = self._view()
        sub._set_root(self._join_root(path))
        return sub

    def _view(self: _FS) -> _FS:
        """A shallow copy sharing every attribute's object (no pickling round trip)."""
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        return view

    def _join_root(self, path: str) -> str:
        """The root of a view at ``path`` (inside this filesystem's root, or
        :class:`PermissionError`)."""
        inside, root = self._confined(path), self._root()
        return posixpath.join(root, inside) if root and inside else inside or root

    def _confined(self, path: str) -> str:
        """``path`` relative to this filesystem's root (``""`` for the root itself), as
        :func:`pfio._uri.confined_name` takes it.

        Raises:
            PermissionError: ``path`` climbs out of the root.
        """
        return confined_name(self._root(), os.fspath(path), self._shown_root)

    def _shown_root(self) -> str:
        """This filesystem's root as errors name it (a URL where the scheme is not
        ``file``)."""
        return self._describe("")

    def _root(self) -> str:
        return getattr(self, "root", "")

    def _set_root(self, root: str) -> None:
        self.root = root

    def open_zip(self, path: str, mode: str = "r", **kwargs: Any) -> Zip:
        """Open the zip archive at ``path`` on this filesystem as a filesystem.

        ``mode`` is ``"r"`` to read or ``"w"`` to create a new archive.
        """
        archive: Zip = registry.container_factory("zip")(self, path, mode, **kwargs)
        return archive

    def open_tar(self, path: str, mode: str = "r", **kwargs: Any) -> Tar:
        """Open the tar archive at ``path`` (``.tar``, ``.tar.gz``, ``.tgz``) as a filesystem."""
        archive: Tar = registry.container_factory("tar")(self, path, mode, **kwargs)
        return archive

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:  # noqa: B027 - most filesystems hold nothing to release
        """Release what this filesystem holds open. Closing twice is harmless."""

    @property
    def is_forked(self) -> bool:
        """True in a child process of the one that created this object."""
        return self._pid != os.getpid()

    def __enter__(self) -> FS:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _describe(self, path: str) -> str:
        """A readable name of ``path`` (a URL where the scheme is not ``file``), for errors,
        reprs and log lines: without the ``user:password@`` a root may start with."""
        root = self._root()
        try:
            joined = join_confined(root, path) if root else path
        except PermissionError:  # a name outside the root, described as it was given
            joined = posixpath.join(root, path)
        if self.scheme in ("", "file"):
            return joined
        return without_userinfo(f"{self.scheme}://{joined.lstrip('/')}")


#: options of PFIO 2.x backends that pfio accepts and does not need (no warning)
_PFIO2_OPTIONS = frozenset({"trace", "scheme", "reset_on_fork", "_skip_connect"})

_warned_options: set[tuple[str, str]] = set()


def warn_unknown_options(owner: str, options: Iterable[str]) -> None:
    """Warn (once per process for each ``owner`` and option) that the backend ``owner``
    ignores ``options``: a misspelt option would otherwise be dropped silently. Options of
    PFIO 2.x that pfio does not need pass without a warning."""
    for name in sorted(set(options) - _PFIO2_OPTIONS):
        if (owner, name) not in _warned_options:
            _warned_options.add((owner, name))
            warnings.warn(f"{owner}: unknown option {name!r} ignored", UserWarning,
                          stacklevel=3)


#: bytes moved per read and write when a file is streamed from one filesystem to another
COPY_CHUNK = 8 << 20


def stream_copy(src: FS, src_path: str, dst: FS, dst_path: str,
                chunk_size: int = COPY_CHUNK) -> int:
    """Stream the file ``src_path`` of ``src`` to ``dst_path`` on ``dst`` in chunks of
    ``chunk_size`` bytes (memory stays bounded whatever the file's size); return the number
    of bytes copied. The destination appears only when the copy is complete: an error
    part-way discards what was written."""
    copied = 0
    with src.open(src_path, "rb") as reader, dst.open(dst_path, "wb") as writer:
        while chunk := reader.read(chunk_size):
            writer.write(chunk)
            copied += len(chunk)
    return copied

