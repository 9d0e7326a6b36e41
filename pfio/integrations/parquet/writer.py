"""Writing rows (dicts) into a Parquet dataset on any pfio URL, streaming."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Any

import pyarrow.parquet as pq

from ...api import from_url, open_url
from .schema import Schema


def write_dataset(url: str, schema: Schema, rows: Iterable[dict[str, Any]],
                  row_group_size: int = 1024, rows_per_file: int | None = None,
                  compression: str = "snappy") -> list[str]:
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

    Returns:
        the URLs of the files written.
    """
    if row_group_size < 1:
        raise ValueError("row_group_size must be at least 1")
    from_url(url, create=True).close()
    written: list[str] = []
    file_rows = 0
    writer: _PartWriter | None = None
    batch: list[dict[str, Any]] = []
    try:
        for row in rows:
            batch.append(schema.encode_row(row))
            if len(batch) == row_group_size:
                if writer is None:
                    writer = _PartWriter(url, len(written), schema, compression)
                writer.write(batch)
                file_rows += len(batch)
                batch = []
                if rows_per_file and file_rows >= rows_per_file:
                    written.append(writer.close())
                    writer, file_rows = None, 0
        if batch or (writer is None and not written):
            writer = writer or _PartWriter(url, len(written), schema, compression)
            writer.write(batch)
        if writer is not None:
            written.append(writer.close())
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return written


class _PartWriter:
    def __init__(self, url: str, index: int, schema: Schema, compression: str) -> None:
        self.url = posixpath.join(url, f"part-{index:05d}.parquet")
        self._schema = schema
        self._file = open_url(self.url, "wb")
        self._writer = pq.ParquetWriter(self._file, schema.arrow_schema(),
                                        compression=compression)

    def write(self, rows: list[dict[str, Any]]) -> None:
        table = self._schema.to_table(rows)
        self._writer.write_table(table, row_group_size=max(1, len(rows)))

    def close(self) -> str:
        self._writer.close()
        self._file.close()
        return self.url

    def abort(self) -> None:
        self._file.abort()
        try:
            self._writer.close()  # pyarrow's writer wants closing; the file publishes nothing
        finally:
            self._file.close()
