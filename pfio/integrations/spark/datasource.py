"""``spark.read.format("pfio")`` and ``df.write.format("pfio")`` through Spark's Python Data
Source API, on every pfio URL.

Reads: the dataset's files are found and opened by pfio (s3, hdfs, file, zip members...),
row groups are split over ``partitions`` Spark tasks, each read by pfio's Parquet reader
with only the selected columns (the schema given to ``.schema(...)``, or the ``columns``
option) and, where :func:`register` lets it take filters, the pushed filters applied
(comparisons, ``IN``, null and string tests on plain columns; Spark evaluates the rest).
Columns keep their stored form (arrays as Spark arrays, images and ``.npy`` as binary) and
carry their pfio field as column metadata.

Writes: each task writes Parquet files aside and the job's commit publishes them
(:mod:`~pfio.integrations.spark.staging`), so a failed or retried task never leaves
partial or duplicate files; ``mode("overwrite")`` replaces the dataset, ``mode("append")``
adds to it. Columns with :func:`~pfio.integrations.spark.column_metadata` are stored as pfio
fields (fixed-shape arrays as pfio's fixed-size lists).

Options (reads): ``columns`` (comma-separated), ``partitions`` (Spark tasks; default: one
per file, at most one per row group). Writes: ``row_group_size`` (default 1024),
``rows_per_file`` (default: one file per task), ``compression`` (default snappy).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    Filter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from ...api import open_url
from ..parquet import ParquetReader
from ..parquet.files import parquet_files
from ..parquet.partitions import Partitions
from ..parquet.writer import write_tables
from . import filters, schemas
from .staging import StagedJob, TaskFiles

logger = logging.getLogger(__name__)

#: the format name :func:`register` gives the data source
FORMAT = "pfio"
#: the Spark setting that lets a Python data source take filters
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark: SparkSession, pushdown: bool | None = None) -> None:
    """Make ``format("pfio")`` readable and writable in ``spark``'s session.

    Args:
        spark: the session.
        pushdown: let reads take filters (sets ``spark.sql.python.filterPushdown.enabled``
            for the session, which Spark requires of a data source that takes filters).
            None (the default): only where Spark keeps the reader that took a query's
            filters to that query (see :func:`pushdown_is_safe`); elsewhere Spark
            evaluates every filter. True: take filters anyway (then load the DataFrame
            again for each filtered query); False: never.
    """
    if pushdown is None:
        pushdown = pushdown_is_safe(spark)
    elif pushdown and not pushdown_is_safe(spark):
        logger.warning("Spark %s shares the reader that took a query's filters with the "
                       "later queries of the same DataFrame: load it again for each query",
                       spark.version)
    if pushdown:
        spark.conf.set(PUSHDOWN_CONF, "true")
    spark.dataSource.register(PfioDataSource if pushdown else PfioPlainDataSource)


#: the provider of Spark's Python data sources; Spark versions whose provider has
#: ``setReadInfo`` keep the read planned with a query's pushed filters on it, for every
#: later scan of the relation
_PROVIDER = "org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2"


def pushdown_is_safe(spark: SparkSession) -> bool:
    """Whether filters pushed into a Python data source stay with their own query.

    Spark up to at least 4.3 stores the read that filter pushdown planned (the reader, with
    the filters it took) on the data source's provider, which every DataFrame derived from
    one ``load()`` shares: after ``df.filter("label > 4").count()``, ``df.count()`` reads
    with the filter and Spark does not know it. False there, and where the session does
    not show its JVM (Spark Connect)."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return False
    try:
        provider = jvm.java.lang.Class.forName(_PROVIDER)
    except Exception:  # noqa: BLE001 - py4j raises its own error kinds: a Spark we don't know
        return False
    return "setReadInfo" not in {method.getName() for method in provider.getMethods()}


def dataset_schema(url: str) -> pa.Schema:
    """The Arrow schema of the dataset ``url``: its first file's, then its hive partition
    columns, with the file's metadata (pfio's schema, Spark's)."""
    files = parquet_files(url)
    with open_url(files[0], "rb") as f:
        arrow_schema = pq.read_schema(f)
    partitions = Partitions(url, files)
    partitions.check(arrow_schema.names)
    for key, arrow_type in partitions.types.items():
        arrow_schema = arrow_schema.append(pa.field(key, arrow_type))
    return arrow_schema


class Slice(InputPartition):
    """One Spark task's share of a dataset: row groups ``index``, ``index + count``, ..."""

    def __init__(self, index: int, count: int) -> None:
        super().__init__(index)
        self.index = index
        self.count = count


class PlainReader(DataSourceReader):
    """Reads the row groups of a dataset in Spark tasks; leaves filters to Spark."""

    def __init__(self, url: str, schema: StructType, partitions: int | None) -> None:
        self.url = url
        self.spark_schema = schema
        self.columns = schema.fieldNames()
        self.expression: Any = None
        self.arrow_schema = dataset_schema(url)
        unknown = sorted(set(self.columns) - set(self.arrow_schema.names))
        if unknown:
            raise ValueError(f"columns {unknown} are not in {url}: {self.arrow_schema.names}")
        self.partition_count = partitions

    def partitions(self) -> Sequence[InputPartition]:
        reader = ParquetReader(self.url, columns=self.columns, decode=False, rank=0,
                               world_size=1)
        count = self.partition_count or len(reader.files)
        count = max(1, min(count, len(reader.row_groups)))
        return [Slice(i, count) for i in range(count)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, Slice):
            raise TypeError(f"not a partition of this reader: {partition!r}")
        reader = ParquetReader(self.url, columns=self.columns, decode=False,
                               filters=self.expression, rank=partition.index,
                               world_size=partition.count)
        target = to_arrow_schema(self.spark_schema)
        for table in reader.tables():
            yield from table.cast(target).to_batches()


class FilteringReader(PlainReader):
    """A :class:`PlainReader` that takes the filters pyarrow evaluates as Spark does."""

    def pushFilters(self, filters_: list[Filter]) -> list[Filter]:
        self.expression, left = filters.split(filters_, self.arrow_schema)
        logger.debug("%s: %d filters pushed, %d left to Spark", self.url,
                     len(filters_) - len(left), len(left))
        return left


class PfioDataSource(DataSource):
    """The ``pfio`` format: Parquet datasets on any pfio URL (see the module's doc)."""

    _reader_class: type[PlainReader] = FilteringReader

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def _url(self) -> str:
        url = self.options.get("path")
        if not url:
            raise ValueError("format('pfio') needs a URL: .load(url) or .save(url)")
        return url.rstrip("/")

    def schema(self) -> StructType:
        arrow_schema = dataset_schema(self._url())
        columns = self.options.get("columns")
        if columns:
            names = [c.strip() for c in columns.split(",")]
            missing = sorted(set(names) - set(arrow_schema.names))
            if missing:
                raise ValueError(f"columns {missing} are not in {self._url()}: "
                                 f"{arrow_schema.names}")
            arrow_schema = pa.schema([arrow_schema.field(n) for n in names],
                                     metadata=arrow_schema.metadata)
        return schemas.to_spark_schema(arrow_schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        return self._reader_class(self._url(), schema, _int_option(self.options, "partitions"))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        return Writer(self._url(), schema, overwrite,
                      row_group_size=_int_option(self.options, "row_group_size") or 1024,
                      rows_per_file=_int_option(self.options, "rows_per_file"),
                      compression=self.options.get("compression", "snappy"))


class PfioPlainDataSource(PfioDataSource):
    """The ``pfio`` format without filter pushdown (see :func:`register`)."""

    _reader_class = PlainReader


@dataclass(frozen=True)
class Committed(WriterCommitMessage):
    """A task's commit message: the files its attempt staged."""

    files: TaskFiles


class Writer(DataSourceArrowWriter):
    """Writes each task's Arrow batches to its staging directory; publishes on commit."""

    def __init__(self, url: str, schema: StructType, overwrite: bool, row_group_size: int,
                 rows_per_file: int | None, compression: str) -> None:
        self.job = StagedJob(url, overwrite=overwrite)
        self.schema = schema
        self.row_group_size = row_group_size
        self.rows_per_file = rows_per_file
        self.compression = compression

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Committed:
        context = TaskContext.get()
        task, attempt = ((context.partitionId(), context.attemptNumber()) if context
                         else (0, 0))
        directory = self.job.task_directory(task, attempt)
        batches = iter(iterator)
        first = next(batches, None)
        if first is None:
            return Committed(TaskFiles(task, directory, [], 0))
        stored = schemas.storage_schema(self.schema, first.schema)
        rows = 0

        def tables() -> Iterator[pa.Table]:
            nonlocal rows
            for batch in _chain(first, batches):
                rows += batch.num_rows
                yield pa.Table.from_batches([batch])

        written = write_tables(f"{self.job.url}/{directory}", stored, tables(),
                               row_group_size=self.row_group_size,
                               rows_per_file=self.rows_per_file,
                               compression=self.compression, prefix=self.job.prefix(task))
        names = [w.rsplit("/", 1)[-1] for w in written]
        return Committed(TaskFiles(task, directory, names, rows))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self.job.commit([m.files if isinstance(m, Committed) else None for m in messages])

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self.job.abort()


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest


def _int_option(options: Any, name: str) -> int | None:
    value = options.get(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"option {name}={value!r} is not an integer") from None
    if number < 1:
        raise ValueError(f"option {name}={value!r} must be at least 1")
    return number
