"""The ``client="pyarrow"`` HDFS client: ``pyarrow.fs.HadoopFileSystem`` (JVM + libhdfs).

:class:`PyarrowClient` adapts any ``pyarrow.fs.FileSystem`` to the methods of
``hdfs_native.Client`` that :class:`pfio.fs.hdfs.Hdfs` calls, so both clients share one
backend. It is for machines where libhdfs is installed already; the native client needs
neither a JVM nor libhdfs.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from .client import HdfsTarget, check_reachable


def pyarrow_client(target: HdfsTarget) -> PyarrowClient:
    """A :class:`PyarrowClient` over ``pyarrow.fs.HadoopFileSystem`` for ``target``.

    Raises:
        ImportError: pyarrow is not installed.
        ConnectionError: no name node accepts a connection within the timeout.
        OSError: libhdfs or the JVM cannot be loaded (the message says what to set).
    """
    try:
        from pyarrow import fs as pafs
    except ImportError as e:
        raise ImportError("client='pyarrow' needs pyarrow: pip install pyarrow") from e
    check_reachable(target.addresses, target.connect_timeout)
    netloc = target.url.partition("://")[2]
    host, _, port = netloc.partition(":") if len(target.addresses) == 1 else (netloc, "", "0")
    try:
        filesystem = pafs.HadoopFileSystem(
            host, int(port or 0), kerb_ticket=target.kerberos.get("cache"),
            extra_conf=dict(target.config) or None,
        )
    except OSError as e:
        first_line = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise OSError(
            errno.ELIBACC,
            f"client='pyarrow' cannot load the JVM/libhdfs ({first_line}); set JAVA_HOME, "
            "ARROW_LIBHDFS_DIR and CLASSPATH (`hadoop classpath --glob`), or use the "
            "default client='native', which needs neither",
        ) from e
    return PyarrowClient(filesystem)


class _Reader:
    """``hdfs_native.FileReader``'s ``size``/``read_range``/``close`` over a NativeFile."""

    def __init__(self, native_file: Any) -> None:
        self._file = native_file
        self.size = native_file.size()

    def read_range(self, offset: int, length: int) -> bytes:
        data: bytes = self._file.read_at(length, offset)
        return data

    def close(self) -> None:
        self._file.close()


class PyarrowClient:
    """The hdfs-native client methods over a ``pyarrow.fs.FileSystem``."""

    def __init__(self, filesystem: Any) -> None:
        self.fs = filesystem

    def _status(self, info: Any) -> SimpleNamespace:
        from pyarrow.fs import FileType

        isdir = info.type == FileType.Directory
        mtime = int((info.mtime_ns or 0) // 1_000_000)
        return SimpleNamespace(
            path=info.path, length=0 if isdir else (info.size or 0), isdir=isdir,
            permission=0o755 if isdir else 0o644, owner="", group="",
            modification_time=mtime, access_time=mtime, replication=None, blocksize=None,
        )

    def _info(self, path: str) -> Any:
        from pyarrow.fs import FileType

        info = self.fs.get_file_info(path)
        return None if info.type == FileType.NotFound else info

    def get_file_info(self, path: str) -> SimpleNamespace:
        info = self._info(path)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "file not found", path)
        return self._status(info)

    def list_status(self, path: str, recursive: bool = False) -> Iterator[SimpleNamespace]:
        from pyarrow.fs import FileSelector

        infos = self.fs.get_file_info(FileSelector(path, recursive=recursive))
        return iter([self._status(info) for info in sorted(infos, key=lambda i: i.path)])

    def read(self, path: str) -> _Reader:
        from pyarrow.fs import FileType

        try:
            return _Reader(self.fs.open_input_file(path))
        except OSError:
            info = self._info(path)
            if info is not None and info.type == FileType.Directory:
                raise IsADirectoryError(errno.EISDIR, "is a directory", path) from None
            raise

    def create(self, path: str, write_options: Any = None) -> Any:
        if not getattr(write_options, "overwrite", False) and self._info(path) is not None:
            raise FileExistsError(errno.EEXIST, "file already exists", path)
        if getattr(write_options, "create_parent", True):
            self.fs.create_dir(path.rsplit("/", 1)[0] or "/", recursive=True)
        return self.fs.open_output_stream(path)

    def append(self, path: str) -> Any:
        return self.fs.open_append_stream(path)

    def mkdirs(self, path: str, permission: int = 0o755, create_parent: bool = False) -> None:
        self.fs.create_dir(path, recursive=create_parent)

    def rename(self, src: str, dst: str, overwrite: bool = False) -> None:
        if not overwrite and self._info(dst) is not None:
            raise FileExistsError(errno.EEXIST, "rename destination exists", dst)
        self.fs.move(src, dst)

    def delete(self, path: str, recursive: bool = False) -> bool:
        from pyarrow.fs import FileSelector, FileType

        info = self._info(path)
        if info is None:
            return False
        if info.type != FileType.Directory:
            self.fs.delete_file(path)
        elif recursive or not self.fs.get_file_info(FileSelector(path)):
            self.fs.delete_dir(path)
        else:
            raise OSError(errno.ENOTEMPTY, "directory not empty", path)
        return True
