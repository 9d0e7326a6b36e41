"""pfio Parquet datasets as Ray Datasets: :func:`read_dataset` and :func:`write_dataset`."""

from __future__ import annotations

import functools
import logging
import posixpath
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from ray.data import Datasink

from ...api import from_url, open_url
from ...fs.writers import discard
from ..parquet import Schema
from ..parquet.files import parquet_files
from .decode import decode_block
from .filesystem import PfioHandler
from .filesystem import filesystem as pfio_filesystem

if TYPE_CHECKING:
    import ray.data
    from ray.data._internal.execution.interfaces import TaskContext
    from ray.data.block import Block
    from ray.data.datasource import WriteResult

logger = logging.getLogger(__name__)


def read_dataset(url: str, columns: Sequence[str] | None = None, decode: bool = True,
                 **ray_options: Any) -> ray.data.Dataset:
    """The pfio Parquet dataset at ``url`` (any pfio URL) as a Ray Dataset.

    With ``decode`` (the default), the fields the dataset's pfio schema stores as arrays
    or images come back decoded: ``iter_batches(batch_format="numpy")`` gives one
    ``(N, *shape)`` array per field and batch (fixed-shape arrays are decoded a column at a
    time, without a loop over rows), ``iter_torch_batches`` tensors. Without it, or for a
    Parquet store pfio did not write, columns are as stored (arrays as nested lists, images
    as bytes). Codecs added with
    :func:`~pfio.integrations.parquet.register_codec` must be registered in Ray's workers
    too (in a module they import).

    Args:
        url: the dataset directory (or one ``.parquet`` file).
        columns: the columns to read (default: all); only their column chunks are fetched.
        decode: decode arrays and images.
        ray_options: passed to ``ray.data.read_parquet`` (``filesystem`` defaults to
            :func:`~pfio.integrations.ray.filesystem` over the environment's settings;
            ``override_num_blocks``, ``filter``, ``ray_remote_args``...). The schema is
            read on the driver through pfio: from the dataset's first file (found with the
            environment's settings), through ``filesystem`` when it is one of
            :func:`~pfio.integrations.ray.filesystem`.

    Raises:
        FileNotFoundError: no ``.parquet`` file under ``url``.
    """
    import ray.data

    filesystem = ray_options.pop("filesystem", None) or pfio_filesystem()
    first = parquet_files(url.rstrip("/"))[0]  # FileNotFoundError rather than Ray's error
    schema = None
    if decode:
        ours = isinstance(getattr(filesystem, "handler", None), PfioHandler)
        stored = pq.read_schema(first, filesystem=filesystem if ours else pfio_filesystem())
        schema = Schema.from_arrow(stored)
    ds = ray.data.read_parquet(url, filesystem=filesystem, **ray_options)
    if columns is not None:
        ds = ds.select_columns(list(columns))  # pushed down into the read
    if schema is None:
        return ds
    return ds.map_batches(functools.partial(decode_block, schema=schema),
                          batch_format="pyarrow", batch_size=None, zero_copy_batch=True)


def write_dataset(ds: ray.data.Dataset, url: str, schema: Schema, row_group_size: int = 1024,
                  compression: str = "snappy", **write_options: Any) -> list[str]:
    """Write the Ray Dataset ``ds`` as a pfio Parquet dataset under the directory ``url``.

    Rows are encoded by ``schema`` (as :func:`pfio.integrations.parquet.write_dataset`
    does: fixed-shape arrays as Arrow fixed-size lists, images as PNG/JPEG, the schema in
    each file's metadata), so pfio's readers, :func:`read_dataset` and
    ``spark.read.parquet(url)`` read the result. Each write task writes one flat part file,
    ``part-NNNNN.parquet`` after its task index, published atomically when complete: a
    failed task publishes nothing and a retried one replaces its own part, never adds a
    second. Columns of ``ds`` must be the schema's fields (nullable ones may be missing).

    Args:
        ds: the rows (array fields as Ray tensor columns or lists, images as uint8 arrays).
        url: the dataset directory; it must hold no ``.parquet`` file yet.
        schema: the fields.
        row_group_size: rows per row group, at most (a block's rows start a new one).
        compression: Parquet compression codec.
        write_options: passed to ``Dataset.write_datasink`` (``concurrency``,
            ``ray_remote_args``).

    Returns:
        the URLs of the files written, sorted.

    Raises:
        FileExistsError: ``url`` holds ``.parquet`` files already.
        ValueError: a row does not match the schema (raised by Ray as the cause of its
            error).
    """
    if row_group_size < 1:
        raise ValueError("row_group_size must be at least 1")
    sink = PartsSink(url.rstrip("/"), schema, row_group_size, compression)
    ds.write_datasink(sink, **write_options)
    return sorted(sink.written)


class PartsSink(Datasink["str | None"]):
    """Ray's datasink behind :func:`write_dataset`: one part file per write task."""

    def __init__(self, url: str, schema: Schema, row_group_size: int,
                 compression: str) -> None:
        self.url = url
        self.schema = schema
        self.row_group_size = row_group_size
        self.compression = compression
        self.written: list[str] = []

    def on_write_start(self, schema: Any = None) -> None:
        with from_url(self.url, create=True) as fs:
            existing = [n for n in fs.list(recursive=True) if n.endswith(".parquet")]
        if existing:
            raise FileExistsError(f"{self.url} holds a dataset already ({existing[0]}, ...)")

    def write(self, blocks: Iterable[Block], ctx: TaskContext) -> str | None:
        """Write ``blocks`` into this task's part; its URL (None: no rows)."""
        url = posixpath.join(self.url, f"part-{ctx.task_idx:05d}.parquet")
        with _Part(url, self.schema, self.compression) as part:
            for block in blocks:
                part.write(block, self.row_group_size)
            if not part.rows:
                part.discard()
                return None
        return url

    def on_write_complete(self, write_result: WriteResult[str | None]) -> None:
        self.written = [url for url in write_result.write_returns if url]
        logger.info("%s: wrote %d parts, %d rows", self.url, len(self.written),
                    write_result.num_rows)

    def get_name(self) -> str:
        return "PfioParquet"


class _Part:
    """One part file being written: published by ``__exit__`` unless an exception (or
    :meth:`discard`) came first."""

    def __init__(self, url: str, schema: Schema, compression: str) -> None:
        self.schema = schema
        self.rows = 0
        self._file = open_url(url, "wb")
        self._writer = pq.ParquetWriter(self._file, schema.arrow_schema(),
                                        compression=compression)
        self._discarded = False

    def write(self, block: Block, row_group_size: int) -> None:
        from ray.data.block import BlockAccessor

        columns = BlockAccessor.for_block(block).to_numpy()
        if not isinstance(columns, dict):  # a block of one unnamed column
            raise ValueError("write_dataset needs a dataset of named columns")
        names = list(columns)
        count = len(columns[names[0]]) if names else 0
        for start in range(0, count, row_group_size):
            stop = min(count, start + row_group_size)
            rows = [self.schema.encode_row({n: columns[n][i] for n in names})
                    for i in range(start, stop)]
            self._writer.write_table(self.schema.to_table(rows), row_group_size=len(rows))
            self.rows += len(rows)

    def discard(self) -> None:
        self._discarded = True

    def __enter__(self) -> _Part:
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        if exc_type is not None or self._discarded:
            discard(self._file)
        try:
            self._writer.close()
        finally:
            self._file.close()
