"""Reading Parquet datasets: rows or batches, selected, filtered, shuffled and sharded."""

from __future__ import annotations

import itertools
import logging
import random
import sys
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - registers the functions that filters use
import pyarrow.parquet as pq

from ...fs.positional import PositionalFile, PositionalReader
from . import arrays, predicates
from .files import Opener, OpenFiles, SpareFiles, parquet_files
from .partitions import Partitions
from .schema import Field, Schema
from .transform import TransformSpec

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RowGroup:
    """One row group of one file: the unit of reading, shuffling and sharding."""

    url: str
    index: int
    num_rows: int


class ParquetReader:
    """Rows of a Parquet dataset (a directory of ``.parquet`` files, or one file).

    Hive partition directories (``url/part=a/n=3/file.parquet``) become columns of every
    row: strings, or int32 when every value of the key is an int32, as pyarrow infers them
    (see :mod:`~pfio.integrations.parquet.partitions`). They can be selected and filtered
    like the files' columns; a key that is also a column of the files is a ValueError.

    Args:
        url: dataset directory or file, on any pfio filesystem.
        columns: the columns to read (default: all, partition columns last); only their
            column chunks are fetched.
        filters: pyarrow filters (``[("label", "=", 3)]``, DNF lists, or a
            ``pyarrow.compute`` expression) applied to each row group.
        shuffle: shuffle the order of row groups, and rows within each, with ``seed`` and the
            epoch (:meth:`set_epoch`).
        shuffle_rows: whether to shuffle the rows within each row group (default: as
            ``shuffle``), so that row groups may be shuffled and their rows not, or the reverse.
        seed: base of the shuffling.
        rank, world_size: this process's place among distributed ranks (default:
            ``torch.distributed`` when initialised, else 0 of 1). Row groups are split across
            ``world_size`` x DataLoader workers, so each is read by exactly one worker.
        shard_by_index: how row groups are split: False (the default) deals each epoch's
            shuffled order out to the readers, so a reader's share changes with the epoch;
            True gives the row group of index ``i`` (files sorted, then row groups in
            order) to reader ``i % readers`` in every epoch, as Petastorm's ``cur_shard`` does
            (then each reader shuffles its own share).
        decode: restore arrays and images from a pfio schema (foreign files: plain values).
        prefetch: row groups fetched ahead in background threads.
        predicate: keep only the rows it accepts: an object with ``get_fields()`` and
            ``do_include(values)`` (see :mod:`~pfio.integrations.parquet.predicates`),
            tested on decoded values after ``filters``. Its fields are read even when not
            in ``columns`` (and then not returned).
        num_epochs: passes over the dataset in one iteration (None: forever), epochs
            ``epoch``, ``epoch + 1``, ... of the shuffling. An endless reader whose pass
            yields no row stops.
        transform_spec: a :class:`~pfio.integrations.parquet.transform.TransformSpec`
            applied to each row (RowReader) or batch (BatchReader); :attr:`output_schema`
            shows its edits.
        schema: decode with this :class:`Schema` instead of the one stored in the files
            (for stores whose schema is kept elsewhere, as Petastorm keeps its own in
            ``_common_metadata``); its fields may include partition keys.
        cache: read the files through an object cache: True for the default one, a
            directory, or a :class:`pfio.cache.ObjectCache` (see
            :class:`~pfio.integrations.parquet.files.Opener`). Later passes, runs and
            processes then read local copies.
    """

    def __init__(self, url: str, columns: Sequence[str] | None = None,
                 filters: Any = None, shuffle: bool = False, seed: int = 0,
                 rank: int | None = None, world_size: int | None = None,
                 decode: bool = True, prefetch: int = 4, predicate: Any = None,
                 num_epochs: int | None = 1,
                 transform_spec: TransformSpec | None = None, schema: Schema | None = None,
                 shuffle_rows: bool | None = None, shard_by_index: bool = False,
                 cache: Any = None) -> None:
        if predicate is not None:
            predicates.check(predicate)
        if num_epochs is not None and num_epochs < 1:
            raise ValueError(f"num_epochs must be at least 1 or None, not {num_epochs}")
        self.predicate = predicate
        self.num_epochs = num_epochs
        self.transform_spec = transform_spec
        self.url = url.rstrip("/")
        self.columns = list(columns) if columns is not None else None
        empty = filters is None or (isinstance(filters, list) and not filters)
        self.filter = None if empty else pq.filters_to_expression(filters)
        self.shuffle = shuffle
        self.shuffle_rows = shuffle if shuffle_rows is None else shuffle_rows
        self.shard_by_index = shard_by_index
        self.seed = seed
        self.rank, self.world_size = _place(rank, world_size)
        self.decode = decode
        self.epoch = 0
        self.prefetch = prefetch
        self.files = parquet_files(self.url)
        self._open = Opener(self.url, cache)
        self._metadata, spare = _footers(self.files, self._open)
        self._spare = SpareFiles(spare)
        weakref.finalize(self, self._spare.close)
        self.row_groups = [RowGroup(url, i, meta.row_group(i).num_rows)
                           for url, meta in self._metadata.items()
                           for i in range(meta.num_row_groups)]
        self.arrow_schema = self._metadata[self.files[0]].schema.to_arrow_schema()
        """The Arrow schema of the (first) file, without partition columns."""
        self.schema = (None if not decode else schema if schema is not None
                       else Schema.from_arrow(self.arrow_schema))
        self.partitions = Partitions(self.url, self.files)
        self.partitions.check(self.arrow_schema.names)
        self.select(self.columns)
        self.output_schema = (transform_spec.apply_schema(self.schema)
                              if transform_spec and self.schema else self.schema)
        """The schema of what the reader yields (``schema`` after ``transform_spec``)."""

    def select(self, columns: Sequence[str] | None) -> None:
        """Read only ``columns`` (None: all) from the next pass on: a reader made to look at
        a dataset's schema can then read a part of it without reading the footers again."""
        self.columns = list(columns) if columns is not None else None
        self._read_columns = self._columns_to_read(self.arrow_schema.names)
        self._file_columns = None if self._read_columns is None else [
            c for c in self._read_columns if c not in self.partitions.types]

    def _columns_to_read(self, file_columns: list[str]) -> list[str] | None:
        if self.predicate is None:
            return self.columns
        known = set(file_columns) | set(self.partitions.types)
        unknown = sorted(set(self.predicate.get_fields()) - known)
        if unknown:
            raise ValueError(f"predicate fields {unknown} are not columns of {self.url}: "
                             f"{sorted(known)}")
        if self.columns is None:
            return None
        return self.columns + sorted(set(self.predicate.get_fields()) - set(self.columns))

    def set_epoch(self, epoch: int) -> None:
        """Use the shuffling order of ``epoch``."""
        self.epoch = epoch

    def my_row_groups(self, epoch: int | None = None) -> list[RowGroup]:
        """The row groups this rank and DataLoader worker read in ``epoch`` (default: the
        current one), in order."""
        epoch = self.epoch if epoch is None else epoch
        worker, workers = _worker()
        reader, readers = self.rank * workers + worker, self.world_size * workers
        order = list(self.row_groups[reader::readers] if self.shard_by_index
                     else self.row_groups)
        if self.shuffle:
            random.Random(self.seed + epoch).shuffle(order)
        return order if self.shard_by_index else order[reader::readers]

    def epochs(self) -> Iterator[pa.Table]:
        """The tables of :meth:`tables` for each of the ``num_epochs`` epochs."""
        count = itertools.count() if self.num_epochs is None else range(self.num_epochs)
        for offset in count:
            rows = 0
            for table in self.tables(self.epoch + offset):
                rows += table.num_rows
                yield table
            if not rows and self.num_epochs is None:
                logger.warning("%s: a pass yielded no row; the endless reader stops", self.url)
                return

    def tables(self, epoch: int | None = None) -> Iterator[pa.Table]:
        """Arrow tables of this reader's row groups in ``epoch`` (default: the current one),
        filtered by ``filters`` and ``predicate``, rows shuffled if asked.

        Up to ``prefetch`` row groups are fetched ahead in background threads. Each file is
        opened once per pass and shared by the threads (the first pass in this process
        starts with the files opened to read the footers); a row group costs one positional
        read of its column chunks, coalesced (one ranged GET on S3)."""
        epoch = self.epoch if epoch is None else epoch
        rng = np.random.default_rng([self.seed, epoch, self.rank, _worker()[0]])
        files = OpenFiles(self._spare.take(), self._open)
        with files, ThreadPoolExecutor(max(1, self.prefetch), "pfio-parquet") as pool:
            pending: deque[Future[pa.Table]] = deque()
            groups = iter(self.my_row_groups(epoch))
            for group in groups:
                pending.append(pool.submit(self._read_group, group, files))
                if len(pending) > self.prefetch:
                    break
            while pending:
                table = pending.popleft().result()
                next_group = next(groups, None)
                if next_group is not None:
                    pending.append(pool.submit(self._read_group, next_group, files))
                if self.filter is not None:
                    table = table.filter(self.filter)
                if self.predicate is not None:
                    table = self._apply_predicate(table)
                if self.shuffle_rows and table.num_rows > 1:
                    table = table.take(rng.permutation(table.num_rows))
                if table.num_rows:
                    yield table

    def _apply_predicate(self, table: pa.Table) -> pa.Table:
        keep = predicates.mask(self.predicate, _Columns(self, table))
        table = table.filter(pa.array(keep, pa.bool_()))
        return table if self.columns is None else table.select(self.columns)

    def _read_group(self, group: RowGroup, files: OpenFiles) -> pa.Table:
        handle = PositionalFile(files.get(group.url), group.url)
        parquet = pq.ParquetFile(handle, metadata=self._metadata[group.url], pre_buffer=True)
        table = parquet.read_row_group(group.index, columns=self._file_columns)
        return self.partitions.append(table, group.url, self._read_columns)

    def _field(self, name: str) -> Field | None:
        return self.schema.fields.get(name) if self.schema else None

    def _dense(self, name: str, column: pa.ChunkedArray) -> np.ndarray | None:
        """A fixed-shape array column decoded as one array, without a loop over rows (None:
        not such a column, or it has nulls or rows of different shapes)."""
        field = self._field(name)
        if not self.decode or not arrays.is_list_type(column.type) or (
                field is not None and field.codec != "ndarray"):
            return None
        values = arrays.dense(column)
        known = None if field is None else field.known_shape
        if values is None or field is None or known is None:
            return values
        return arrays.fit(values, name, field.dtype, known)

    def _decode_rows(self, name: str, column: pa.ChunkedArray) -> list[Any]:
        values: list[Any] = column.to_pylist()
        field = self._field(name)
        if field is None or field.codec == "scalar":
            return values
        return [field.decode(v) for v in values]


class RowReader(ParquetReader):
    """Iterates rows as dicts (arrays and images decoded)."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for rows in self.groups():
            yield from rows

    def groups(self) -> Iterator[list[dict[str, Any]]]:
        """The rows of each row group read, a list per row group (after ``filters``,
        ``predicate`` and ``transform_spec``), for consumers that work within row groups
        (n-grams of consecutive rows)."""
        spec = self.transform_spec
        for table in self.epochs():
            columns = {name: self._row_values(name, table.column(name))
                       for name in table.column_names}
            rows = [{name: values[i] for name, values in columns.items()}
                    for i in range(table.num_rows)]
            yield [spec.apply_row(row) for row in rows] if spec else rows

    def _row_values(self, name: str, column: pa.ChunkedArray) -> Any:
        field = self._field(name)
        if field is not None and field.fixed_shape:  # foreign lists stay Python lists
            values = self._dense(name, column)
            if values is not None:  # rows own their arrays, as rows decoded from bytes do
                return values if values.flags.writeable else values.copy()
        return self._decode_rows(name, column)


class BatchReader(ParquetReader):
    """Iterates batches: dicts of NumPy arrays (stacked when shapes agree, else lists).

    Args:
        batch_size: rows per batch; the last batch of this reader may be smaller. None: one
            batch per row group read (its rows after ``filters`` and ``predicate``), as
            Petastorm's batch reader yields them.
        (others as :class:`ParquetReader`)
    """

    def __init__(self, url: str, batch_size: int | None = 64, **kwargs: Any) -> None:
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1 or None")
        super().__init__(url, **kwargs)
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self.batch_size is None:
            for table in self.epochs():
                yield self._batch(table)
            return
        pending: list[pa.Table] = []
        count = 0
        for table in self.epochs():
            pending.append(table)
            count += table.num_rows
            while count >= self.batch_size:
                merged = pa.concat_tables(pending)
                yield self._batch(merged.slice(0, self.batch_size))
                rest = merged.slice(self.batch_size)
                pending, count = [rest], rest.num_rows
        if count:
            yield self._batch(pa.concat_tables(pending))

    def _batch(self, table: pa.Table) -> dict[str, Any]:
        """Columns as arrays: fixed-shape list columns (pfio's fixed-shape ndarrays, foreign
        lists of one length) as one ``(N, *shape)`` array each; other arrays and images
        decoded per row and stacked when their shapes agree (nulls: a list with None); then
        ``transform_spec``."""
        batch = {}
        for name in table.column_names:
            field = self._field(name)
            column = table.column(name)
            values = self._dense(name, column)
            if values is not None:
                batch[name] = values
            elif field is None or field.codec == "scalar":
                batch[name] = column.to_numpy(zero_copy_only=False)
            else:
                batch[name] = _stack(self._decode_rows(name, column))
        return self.transform_spec.apply_batch(batch) if self.transform_spec else batch


class _Columns:
    """A row group's columns as a predicate sees them (:class:`predicates.Columns`)."""

    def __init__(self, reader: ParquetReader, table: pa.Table) -> None:
        self.reader = reader
        self.table = table

    def values(self, name: str) -> list[Any]:
        return self.reader._decode_rows(name, self.table.column(name))

    def is_plain(self, name: str) -> bool:
        field = self.reader._field(name)
        return (field.codec == "scalar" if field is not None
                else not pa.types.is_nested(self.table.column(name).type))


def _stack(values: list[Any]) -> Any:
    shapes = {getattr(v, "shape", None) for v in values}
    return np.stack(values) if len(shapes) == 1 and None not in shapes else values


#: bytes read from the end of a file for its footer (a larger footer costs a second read)
FOOTER_GUESS = 64 << 10
#: files whose footer reads stay open for the first pass, at most (the rest are closed)
KEEP_OPEN = 64


def _footers(files: list[str], opener: Opener) -> tuple[dict[str, pq.FileMetaData],
                                                       dict[str, PositionalReader]]:
    """The footer of each file, read once, files in parallel (row groups are then read
    without it), and the first :data:`KEEP_OPEN` files, still open."""
    with ThreadPoolExecutor(min(16, len(files)), "pfio-parquet-footer") as pool:
        futures = [pool.submit(_footer, url, opener) for url in files]
    metadata: dict[str, pq.FileMetaData] = {}
    opened: dict[str, PositionalReader] = {}
    error: BaseException | None = None
    for url, future in zip(files, futures, strict=True):
        try:
            metadata[url], reader = future.result()
        except Exception as exc:  # noqa: BLE001 - raised below, once every file is closed
            error = error or exc
            continue
        if len(opened) < KEEP_OPEN and error is None:
            opened[url] = reader
        else:
            reader.file.close()
    if error is not None:
        for reader in opened.values():
            reader.file.close()
        raise error
    return metadata, opened


def _footer(url: str, opener: Opener) -> tuple[pq.FileMetaData, PositionalReader]:
    """The footer of ``url`` and the file, open: one read of its tail (on S3 the request
    that opens the file)."""
    reader = PositionalReader(opener(url, first_fetch=-FOOTER_GUESS))
    try:
        start, tail = reader.read_tail(FOOTER_GUESS)
        if len(tail) < 12 or tail[-4:] != b"PAR1":
            raise ValueError(f"{url} is not a Parquet file (no PAR1 at its end)")
        needed = int.from_bytes(tail[-8:-4], "little") + 8
        if needed > len(tail) and needed <= start + len(tail):
            tail = reader.read_at(start + len(tail) - needed, needed - len(tail)) + tail
        return pq.read_metadata(pa.BufferReader(tail)), reader
    except BaseException:
        reader.file.close()
        raise


def _worker() -> tuple[int, int]:
    """This DataLoader worker's id and the number of workers (0 of 1 outside DataLoader)."""
    if "torch" not in sys.modules:  # no DataLoader without torch: do not import it
        return 0, 1
    import torch.utils.data

    info = torch.utils.data.get_worker_info()
    return (info.id, info.num_workers) if info else (0, 1)


def _place(rank: int | None, world_size: int | None) -> tuple[int, int]:
    if rank is not None and world_size is not None:
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in [0, {world_size})")
        return rank, world_size
    if "torch" not in sys.modules:
        return 0, 1
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1
