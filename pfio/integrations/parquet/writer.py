"""Writing rows (dicts), or Arrow tables, into a Parquet dataset on any pfio URL, streaming.

Files are named ``{prefix}-00000.parquet``, ``{prefix}-00001.parquet``, ... directly under
the dataset's directory, a layout every Parquet reader takes without options (Spark's
``spark.read.parquet(url)`` included). Writers that share a dataset (Dask partitions, Spark
tasks) each use their own ``prefix`` rather than a subdirectory.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ...api import from_url, open_url
from ...fs.writers import discard
from .schema import Schema


def write_dataset(url: str, schema: Schema, rows: Iterable[dict[str, Any]],
                  row_group_size: int = 1024, rows_per_file: int | None = None,
                  compression: str = "snappy", prefix: str = "part") -> list[str]:
    """Write ``rows`` under the directory ``url`` as ``part-00000.parquet``, ...

    Rows are encoded by ``schema`` (fixed-shape ndarrays as Arrow fixed-size lists, see
    :class:`Field`) and written ``row_group_size`` at a time, so memory holds
    one row group, never the dataset. Each file is published atomically when complete.

    Args:
        url: the dataset directory (created where the backend has directories).
        schema: the fields.
        rows: dicts mapping field names to values.
        row_group_size: rows per row group (the unit of reading, shuffling and sharding).
        rows_per_file: start a new file after this many rows (default: one file).
        compression: Parquet compression codec.
        prefix: the start of the file names (``{prefix}-00000.parquet``): writers that
            share ``url`` each pass their own (``part-00003`` for shard 3, say).

    Returns:
        the URLs of the files written.
    """
    if row_group_size < 1:
        raise ValueError("row_group_size must be at least 1")

    def tables() -> Iterator[pa.Table]:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(schema.encode_row(row))
            if len(batch) == row_group_size:
                yield schema.to_table(batch)
                batch = []
        if batch:
            yield schema.to_table(batch)

    return write_tables(url, schema.arrow_schema(), tables(), row_group_size=row_group_size,
                        rows_per_file=rows_per_file, compression=compression, prefix=prefix)


def write_tables(url: str, arrow_schema: pa.Schema, tables: Iterable[pa.Table],
                 row_group_size: int = 1024, rows_per_file: int | None = None,
                 compression: str = "snappy", prefix: str = "part") -> list[str]:
    """Write Arrow ``tables`` (of ``arrow_schema``, whose metadata the files keep) under
    the directory ``url`` as ``{prefix}-00000.parquet``, ..., streaming: row groups of at
    most ``row_group_size`` rows, a new file after ``rows_per_file`` rows (default: one
    file; a file is never split inside a table's row group). With no rows, one empty file
    is written. Each file is published atomically when complete; on an exception the file
    being written is discarded (those complete stay).

    Returns:
        the URLs of the files written.
    """
    if row_group_size < 1:
        raise ValueError("row_group_size must be at least 1")
    from_url(url, create=True).close()
    written: list[str] = []
    file_rows = 0
    writer: _PartWriter | None = None
    try:
        for table in tables:
            if writer is None:
                writer = _PartWriter(_part_url(url, prefix, len(written)), arrow_schema,
                                     compression)
            writer.write(table, row_group_size)
            file_rows += table.num_rows
            if rows_per_file and file_rows >= rows_per_file:
                written.append(writer.close())
                writer, file_rows = None, 0
        if writer is None and not written:
            writer = _PartWriter(_part_url(url, prefix, 0), arrow_schema, compression)
            writer.write(arrow_schema.empty_table(), row_group_size)
        if writer is not None:
            written.append(writer.close())
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return written


def _part_url(url: str, prefix: str, index: int) -> str:
    if not prefix or "/" in prefix or prefix.startswith((".", "_")):
        raise ValueError(f"prefix {prefix!r} must be a plain file name start (no '/', not "
                         "hidden: readers skip names starting with '.' or '_')")
    return posixpath.join(url, f"{prefix}-{index:05d}.parquet")


class _PartWriter:
    def __init__(self, url: str, arrow_schema: pa.Schema, compression: str) -> None:
        self.url = url
        self._schema = arrow_schema
        self._file = open_url(self.url, "wb")
        self._writer = pq.ParquetWriter(self._file, arrow_schema, compression=compression)

    def write(self, table: pa.Table, row_group_size: int) -> None:
        if table.schema != self._schema:
            table = table.cast(self._schema)
        self._writer.write_table(table, row_group_size=row_group_size)

    def close(self) -> str:
        self._writer.close()
        self._file.close()
        return self.url

    def abort(self) -> None:
        discard(self._file)
        try:
            self._writer.close()  # pyarrow's writer wants closing; the file publishes nothing
        finally:
            self._file.close()
