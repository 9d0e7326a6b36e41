"""pfio as a ``pyarrow.fs.FileSystem`` for Ray Data's readers and writers.

Ray hands its filesystem paths without their scheme (``s3://bucket/key`` becomes
``bucket/key``), so :meth:`PfioHandler.normalize_path` turns every URL into the form of
pfio's fsspec bridge, ``SCHEME/netloc/path`` (``s3/bucket/key``, ``file/abs/path``), which
keeps the scheme through Ray's stripping. The handler is an ``FSSpecHandler`` over that
bridge (:class:`~pfio.integrations.fsspec.PfioFileSystem`) because Ray accepts a Python
filesystem for ``s3://``, ``file://`` and bare paths only when it is one; its fsspec view
names pfio's schemes as its protocols.

Where the bridge alone is slow (Ray's Parquet reads through it are 2-3x slower than
through Ray's own S3 filesystem): pyarrow reads a Parquet file through ``open_input_file``
with positional reads of column chunks, one call at a time (``pyarrow.PythonFile`` holds a
lock around each), and the bridge's file is pfio's buffered S3 reader, whose seek-and-read
fetches blocks sized for sequential reading. Here ``open_input_file`` returns a
:class:`RandomAccessFile`: its opening GET reads the file's tail (Parquet's footer), each
read is one ranged GET of exactly the bytes asked for, and, for a Parquet file, the other
chunks of the columns pyarrow reads are fetched ahead in parallel
(:mod:`~pfio.integrations.ray.prefetch`), which gives back the parallelism the lock takes
away. ``open_input_stream`` (whole files: images, CSV, JSON) is pfio's sequential reader,
with its parallel read-ahead.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyarrow.fs import FileInfo, FileSelector, FSSpecHandler, PyFileSystem

from ...fs.positional import PositionalFile
from ..fsspec import PfioFileSystem
from .prefetch import ChunkPrefetcher, positional_reader

#: bytes the request that opens a random-access file reads from its end (Parquet's footer)
TAIL_FETCH = 64 << 10

#: the schemes Ray is told this filesystem serves ("" and "file": local paths)
SCHEMES = ("pfio", "s3", "file", "mem", "hdfs", "")


class RandomAccessFile(PositionalFile):
    """A read-only file whose every ``read`` is one positional read of the open pfio file
    ``raw`` (one ranged GET on S3, ``pread`` on a local file); closing it closes ``raw``."""

    def close(self) -> None:
        if not self.closed:
            try:
                if isinstance(self._reader, ChunkPrefetcher):
                    self._reader.close()
                self._reader.file.close()
            finally:
                super().close()


class RayFileSystemView(PfioFileSystem):
    """pfio's fsspec filesystem under the protocols Ray checks a filesystem against
    (:data:`SCHEMES`), taking pfio URLs and local paths as well as its own
    ``SCHEME/netloc/path`` form (see :meth:`_strip_protocol`)."""

    # (fsspec takes a str or a tuple of them; PfioFileSystem's str makes mypy expect a str)
    protocol = SCHEMES  # type: ignore[assignment]

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        """``path`` in the bridge's form, ``SCHEME/netloc/path``: a pfio URL
        (``s3://b/k``, ``pfio://s3/b/k``) or a local path (``/abs/x``) is turned into it,
        a path already in it (``s3/b/k``, what Ray passes on) is kept."""
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path)
        if path.startswith("pfio://"):
            path = path[len("pfio://"):]
        elif "://" in path:
            scheme, _, rest = path.partition("://")
            path = f"file{rest}" if scheme == "file" else f"{scheme}/{rest}"
        elif path.startswith("/"):
            path = "file" + path
        return path.rstrip("/")

    def open_random_access(self, path: str) -> RandomAccessFile:
        """``path`` opened for positional reads; on S3 the opening GET reads the last
        :data:`TAIL_FETCH` bytes."""
        path = self._strip_protocol(path)
        with self.target(path) as (fs, name):
            raw = fs.open(name, "rb", first_fetch=-TAIL_FETCH)
        try:
            reader = positional_reader(raw, TAIL_FETCH)
        except BaseException:
            raw.close()
            raise
        return RandomAccessFile(reader, path)


# (pyarrow has no type hints: its classes are Any to mypy)
class PfioHandler(FSSpecHandler):  # type: ignore[misc]
    """A ``pyarrow.fs.FileSystemHandler`` over every pfio URL (``PyFileSystem(handler)`` is
    a pyarrow filesystem; :func:`filesystem` makes one).

    Paths: pfio URLs (``s3://bucket/key``, ``mem://store/x``, ``hdfs:///user/x``), local
    paths (``/abs/path``), ``pfio://SCHEME/...`` paths, and the ``SCHEME/netloc/path``
    form :meth:`normalize_path` gives (what Ray passes on).

    Args:
        options: backend options of the pfio filesystems it opens (``endpoint=`` for S3...).
    """

    fs: RayFileSystemView

    def __init__(self, **options: Any) -> None:
        super().__init__(RayFileSystemView(**options))
        self.options = options

    def __reduce__(self) -> tuple[Any, ...]:
        return _handler, (self.options,)

    def get_type_name(self) -> str:
        return "pfio"

    def normalize_path(self, path: str) -> str:
        """``path`` as ``SCHEME/netloc/path`` (``s3://b/k``: ``s3/b/k``; ``/x``: ``file/x``),
        which keeps the scheme through Ray's removal of URL schemes."""
        normalized: str = self.fs._strip_protocol(path)
        return normalized

    def get_file_info_selector(self, selector: FileSelector) -> list[FileInfo]:
        base = self.normalize_path(selector.base_dir)
        infos: list[FileInfo] = super().get_file_info_selector(
            FileSelector(base, selector.allow_not_found, selector.recursive))
        return infos

    def open_input_file(self, path: str) -> pa.NativeFile:
        """``path`` for random access (each read is one ranged read)."""
        return pa.PythonFile(self.fs.open_random_access(path), mode="r")


def _handler(options: dict[str, Any]) -> PfioHandler:
    return PfioHandler(**options)


def filesystem(**options: Any) -> PyFileSystem:
    """A ``pyarrow.fs.FileSystem`` over pfio, for Ray Data (and pyarrow) readers and writers.

    Paths are pfio URLs (``s3://bucket/prefix``, ``mem://store/x``, ``hdfs:///user/x``) or
    local paths::

        fs = pfio.integrations.ray.filesystem(endpoint="http://127.0.0.1:9000")
        ds = ray.data.read_parquet("s3://bucket/table", filesystem=fs)
        ds.write_parquet("s3://bucket/out", filesystem=fs)

    Ray's tasks unpickle the filesystem and open their own connections; credentials come
    from ``options`` or, as for pfio everywhere, the environment of each worker (pass it
    with ``ray.init(runtime_env={"env_vars": ...})`` when workers do not inherit it).

    Args:
        options: backend options of the pfio filesystems it opens (``endpoint=``,
            ``aws_access_key_id=``, ... for S3).
    """
    return PyFileSystem(PfioHandler(**options))


__all__ = ["PfioHandler", "RandomAccessFile", "filesystem"]
