"""``Hdfs``: HDFS through the ``hdfs-native`` client (no JVM, no libhdfs) or pyarrow.

``hdfs://NETLOC/path`` names a file of the cluster that ``NETLOC`` selects: a name service of
the Hadoop configuration (``$HADOOP_CONF_DIR``) or a ``host:port`` name node address. An empty
netloc (``hdfs:///path``) takes ``fs.defaultFS``, else the first name service. A filesystem
root without a leading ``/`` is relative to the user's home directory, ``/user/NAME``
(``NAME`` from the ``user`` option, ``$HADOOP_USER_NAME``, the Kerberos principal or the
login name).

The client is created on first use in each process (never pickled, recreated after fork),
after a TCP connection check that fails within ``connect_timeout`` seconds.
"""

from __future__ import annotations

import errno
import io
import os
import posixpath
import stat as _stat
import threading
from collections.abc import Iterator
from typing import IO, Any

from ..._uri import URI, join_confined, netloc_host
from ..base import FS, warn_unknown_options
from ..modes import Mode
from ..stat import FileStat
from ..writers import atomic_writer, is_temporary_name, text_reader
from . import config as hadoop_config
from .client import DEFAULT_CONNECT_TIMEOUT, ClientFactory, HdfsTarget, mapped_errors
from .files import HdfsAppendSink, HdfsAtomicSink, open_reader

#: the clients that ``client=`` names, as import paths of their factories
CLIENTS = {
    "native": "pfio.fs.hdfs.client:native_client",
    "pyarrow": "pfio.fs.hdfs.pyarrow_client:pyarrow_client",
}


def _factory(client: str) -> ClientFactory:
    if client not in CLIENTS:
        raise ValueError(f"unknown HDFS client {client!r}: use one of {', '.join(CLIENTS)}")
    import importlib

    module, _, name = CLIENTS[client].partition(":")
    factory: ClientFactory = getattr(importlib.import_module(module), name)
    return factory


class HdfsFileStat(FileStat):
    """The :class:`FileStat` of an HDFS file or directory (see :func:`file_stat`)."""


def file_stat(status: Any, filename: str) -> HdfsFileStat:
    """A :class:`FileStat` from a client's ``FileStatus``: the common fields plus ``owner``,
    ``group``, ``replication``, ``blocksize`` and ``last_accessed``."""
    kind = _stat.S_IFDIR if status.isdir else _stat.S_IFREG
    return HdfsFileStat(
        filename, status.length, kind | (status.permission & 0o7777),
        status.modification_time / 1000, owner=status.owner, group=status.group,
        replication=status.replication, blocksize=status.blocksize,
        last_accessed=status.access_time / 1000,
    )


class Hdfs(FS):
    """A filesystem on HDFS, rooted at ``cwd``.

    Args:
        cwd: the root directory; relative to the user's home directory unless it starts
            with ``/``. Default: the home directory.
        create: create ``cwd`` (and its parents) when it does not exist.
        nameservice: the netloc: a name service or ``host:port``; default: ``fs.defaultFS``
            or the first name service of the Hadoop configuration.
        client: ``"native"`` (hdfs-native, the default) or ``"pyarrow"``
            (``pyarrow.fs.HadoopFileSystem``: needs a JVM and libhdfs).
        user: the HDFS user name, for the home directory.
        config_dir: the Hadoop configuration directory (default ``$HADOOP_CONF_DIR``).
        config: Hadoop properties that override the configuration files.
        connect_timeout: seconds to wait for the name node to accept a connection.
        kerberos_principal, kerberos_keytab, kerberos_cache: Kerberos credentials for the
            native client (otherwise the default ticket cache of ``kinit`` is used when the
            configuration says ``hadoop.security.authentication=kerberos``).
        client_factory: a picklable callable ``factory(HdfsTarget) -> client`` used instead
            of ``client`` (tests pass :class:`pfio.testing.hdfs_standin.StandinFactory`).

    Reads are positional (``read_at``), so zip and tar archives on HDFS are read without
    downloading them. ``"w"``/``"x"`` writes go to a temporary file renamed over the target
    on close; ``"a"`` appends in place; ``"+"`` modes raise ``io.UnsupportedOperation``.
    Writing a file creates its missing parent directories (as HDFS clients do).

    Raises:
        ValueError: no name service is given or configured, or ``client`` is unknown.
    """

    scheme = "hdfs"

    def __init__(
        self,
        cwd: str | None = None,
        create: bool = False,
        *,
        nameservice: str | None = None,
        client: str = "native",
        user: str | None = None,
        config_dir: str | None = None,
        config: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        kerberos_principal: str | None = None,
        kerberos_keytab: str | None = None,
        kerberos_cache: str | None = None,
        client_factory: ClientFactory | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        warn_unknown_options("Hdfs", options)
        self._client_factory = client_factory or _factory(client)
        file_config = hadoop_config.load_config(config_dir)
        merged = {**file_config, **(config or {})}
        # a ``user:password@`` in the netloc means nothing to HDFS (as to Hadoop's clients),
        # and a name shown in reprs, errors and logs must not carry it
        self.nameservice = netloc_host(nameservice or hadoop_config.default_netloc(merged))
        self.user = hadoop_config.hdfs_user(user, kerberos_principal)
        self.home = hadoop_config.home_directory(merged, self.user)
        kerberos = {"principal": kerberos_principal, "keytab": kerberos_keytab,
                    "cache": kerberos_cache}
        self._target = HdfsTarget(
            url=f"hdfs://{self.nameservice}",
            addresses=tuple(hadoop_config.namenode_addresses(merged, self.nameservice)),
            config=dict(config or {}),
            config_dir=hadoop_config.config_dir(config_dir),
            connect_timeout=connect_timeout,
            kerberos={k: v for k, v in kerberos.items() if v},
        )
        self.root = self._absolute(cwd or "")
        self._lock = threading.Lock()
        self._client: Any = None
        if create:
            self.makedirs("", exist_ok=True)

    @classmethod
    def from_uri(cls, uri: URI, **options: Any) -> Hdfs:
        """The filesystem of ``hdfs://NETLOC/path`` (``path`` as the root)."""
        return cls(uri.path or None, nameservice=uri.netloc or None, **options)

    # -- the client of this process -------------------------------------------------------

    @property
    def client(self) -> Any:
        """The client object of this process, created (and the name node checked) on first
        use. Raises ``ConnectionError`` when no name node answers in time."""
        if self._client is None or self.is_forked:
            if self.is_forked:
                self._lock = threading.Lock()  # another thread may have held it at fork
            with self._lock:
                if self._client is None or self.is_forked:
                    self._client = self._client_factory(self._target)
                    self._pid = os.getpid()
        return self._client

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_client=None, _lock=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._pid = os.getpid()

    @property
    def cwd(self) -> str:
        """The absolute HDFS path of the root (PFIO 2.x's name for it)."""
        return self.root

    def close(self) -> None:
        """Drop this process's client (a new one is created if the filesystem is used)."""
        self._client = None

    def __repr__(self) -> str:
        return f"Hdfs(nameservice={self.nameservice!r}, root={self.root!r})"

    # -- paths ----------------------------------------------------------------------------

    def _absolute(self, path: str) -> str:
        if not path.startswith("/"):
            path = posixpath.join(self.home, path)
        return posixpath.normpath(path).replace("//", "/")

    def _join_root(self, path: str) -> str:
        return self._path(path)

    def _path(self, path: str) -> str:
        """The absolute HDFS path of ``path`` (relative to the root, or an absolute path
        inside it; see :meth:`FS.subfs`).

        Raises:
            PermissionError: ``path`` climbs out of the root.
        """
        joined = join_confined(self.root, os.fspath(path), self._shown_root)
        return posixpath.normpath(joined).replace("//", "/")

    def _describe(self, path: str) -> str:
        return f"hdfs://{self.nameservice}{self._path(path)}"

    def _status(self, full: str, where: str) -> Any:
        with mapped_errors(where):
            return self.client.get_file_info(full)

    def _status_or_none(self, full: str, where: str) -> Any:
        try:
            return self._status(full, where)
        except (FileNotFoundError, NotADirectoryError):
            return None

    # -- files ----------------------------------------------------------------------------

    def _open_binary(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        return self._open(path, Mode(mode.kind, True, mode.plus), buffering, None, None, None)

    def _open(self, path: str, mode: Mode, buffering: int, encoding: str | None,
              errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        full, where = self._path(path), self._describe(path)
        if mode.plus:
            raise io.UnsupportedOperation("hdfs:// files cannot be opened in update ('+') modes")
        if mode.kind == "r":
            reader = self._open_reader(full, where, buffering)
            if mode.binary:
                return reader
            return text_reader(reader, encoding, errors, newline)
        status = self._status_or_none(full, where)
        if status is not None and status.isdir:
            raise IsADirectoryError(errno.EISDIR, "is a directory", where)
        if mode.kind == "x" and status is not None:
            raise FileExistsError(errno.EEXIST, "file exists", where)
        if mode.kind == "a":
            sink: Any = HdfsAppendSink(self.client, full, where, exists=status is not None)
        else:
            sink = HdfsAtomicSink(self.client, full, where, exclusive=mode.kind == "x")
        return atomic_writer(sink, mode, buffering, encoding, errors, newline,
                             buffer_size=1 << 20)

    def _open_reader(self, full: str, where: str, buffering: int) -> IO[bytes]:
        try:
            with mapped_errors(where):
                handle = self.client.read(full)
        except FileNotFoundError:
            status = self._status_or_none(full, where)
            if status is not None and status.isdir:
                raise IsADirectoryError(errno.EISDIR, "is a directory", where) from None
            raise
        return open_reader(handle, where, buffering)

    # -- inspecting -----------------------------------------------------------------------

    def stat(self, path: str) -> FileStat:
        full = self._path(path)
        return file_stat(self._status(full, self._describe(path)), full)

    def isdir(self, path: str) -> bool:
        status = self._status_or_none(self._path(path), self._describe(path))
        return status is not None and status.isdir

    def exists(self, path: str) -> bool:
        return self._status_or_none(self._path(path), self._describe(path)) is not None

    def list(self, path: str = "", recursive: bool = False,
             detail: bool = False) -> Iterator[Any]:
        full, where = self._path(path), self._describe(path)
        if not self._status(full, where).isdir:
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", where)
        with mapped_errors(where):
            statuses = list(self.client.list_status(full, recursive))
        prefix = full.rstrip("/") + "/"
        for status in statuses:
            name = status.path[len(prefix):] if status.path.startswith(prefix) else status.path
            if is_temporary_name(posixpath.basename(name)):
                continue
            if detail:
                yield file_stat(status, name)
            else:
                yield name + "/" if status.isdir else name

    # -- changing -------------------------------------------------------------------------

    def mkdir(self, path: str, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        full, where = self._path(path), self._describe(path)
        if self._status_or_none(full, where) is not None:
            raise FileExistsError(errno.EEXIST, "file exists", where)
        with mapped_errors(where):
            self.client.mkdirs(full, mode & 0o777 or 0o755, False)

    def makedirs(self, path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        full, where = self._path(path), self._describe(path)
        status = self._status_or_none(full, where)
        if status is not None:
            if exist_ok and status.isdir:
                return
            raise FileExistsError(errno.EEXIST, "file exists", where)
        with mapped_errors(where):
            self.client.mkdirs(full, mode & 0o777 or 0o755, True)

    def remove(self, path: str, recursive: bool = False) -> None:
        full, where = self._path(path), self._describe(path)
        with mapped_errors(where):
            removed = self.client.delete(full, recursive)
        if not removed:
            if self._status_or_none(full, where) is None:
                raise FileNotFoundError(errno.ENOENT, "no such file or directory", where)
            raise PermissionError(errno.EPERM, "HDFS refused to remove", where)

    def rename(self, src: str, dst: str) -> None:
        """Rename ``src`` to ``dst``, replacing a file (or an empty directory, when ``src`` is
        a directory) at ``dst``.

        Raises:
            FileNotFoundError: ``src`` or the parent directory of ``dst`` does not exist.
            IsADirectoryError: ``src`` is a file and ``dst`` a directory.
            NotADirectoryError: ``src`` is a directory and ``dst`` a file.
            OSError: ``dst`` is a non-empty directory (``ENOTEMPTY``), or lies under ``src``
                (``EINVAL``).
        """
        src_full, dst_full = self._path(src), self._path(dst)
        src_where, dst_where = self._describe(src), self._describe(dst)
        source = self._status(src_full, src_where)
        if src_full == dst_full:
            return
        if source.isdir and dst_full.startswith(src_full.rstrip("/") + "/"):
            raise OSError(errno.EINVAL, "cannot move a directory into itself", dst_where)
        target = self._status_or_none(dst_full, dst_where)
        if target is not None:
            if target.isdir and not source.isdir:
                raise IsADirectoryError(errno.EISDIR, "is a directory", dst_where)
            if source.isdir and not target.isdir:
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", dst_where)
        with mapped_errors(dst_where):
            self.client.rename(src_full, dst_full, True)
