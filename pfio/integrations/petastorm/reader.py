"""``make_reader`` and ``make_batch_reader``: Petastorm's readers on pfio's Parquet readers.

Both take Petastorm 0.13's arguments and return a :class:`Reader`: an iterator and a context
manager with ``stop()``, ``join()``, ``reset()``, ``schema`` and ``batched_output``.
:func:`make_reader` yields one namedtuple per row (arrays and images decoded, scalars of
the field's NumPy type), or n-grams; :func:`make_batch_reader` yields one namedtuple of
NumPy arrays per row group read.

How Petastorm's arguments map onto pfio (see :mod:`pfio.integrations.petastorm`):

* ``reader_pool_type``: ``"thread"`` and ``"process"`` read ``workers_count`` row groups
  ahead in threads (pfio's reads and decoding release the GIL; no processes are started);
  ``"dummy"`` reads one row group at a time.
* ``cur_shard``/``shard_count``: the row group of index ``i`` goes to shard
  ``i % shard_count`` (Petastorm's rule), every epoch; ``seed`` and ``shuffle_row_groups``
  order each shard's row groups, ``shuffle_rows`` their rows. ``seed=None``: a random seed.
* ``cache_type="local-disk"``: the store's files are read through a
  :class:`pfio.cache.ObjectCache` in ``cache_location`` bounded by ``cache_size_limit``
  bytes (local copies of the files, shared by processes and runs; Petastorm caches decoded
  row groups instead).
* ``predicate``, ``filters``, ``num_epochs``, ``transform_spec``, ``schema_fields``: as
  Petastorm; ``rowgroup_selector`` and ``shuffle_row_drop_partitions > 1`` are not
  supported (NotImplementedError); ``storage_options``, ``filesystem``, ``hdfs_driver``,
  ``results_queue_size``, ``pyarrow_serialize``, ``zmq_copy_buffers``,
  ``convert_early_to_numpy``, ``cache_row_size_estimate``, ``cache_extra_settings`` and
  ``shard_seed`` are accepted and ignored (pfio takes S3 and HDFS settings from its own
  configuration).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ...cache import ObjectCache
from ..parquet import BatchReader, RowReader, TransformSpec
from .metadata import load_unischema
from .ngram import NGram
from .unischema import Unischema, UnischemaField

logger = logging.getLogger(__name__)

POOL_TYPES = ("thread", "process", "dummy")


class NoDataAvailableError(ValueError):
    """A shard would hold no row group (fewer row groups than shards)."""


class Reader:
    """Rows (or batches, or n-grams) of a Parquet store; made by :func:`make_reader` and
    :func:`make_batch_reader`.

    Iterate it for the ``num_epochs`` passes; :meth:`reset` starts over once everything was
    read. Use it as a context manager, or call :meth:`stop` and :meth:`join` when done.
    """

    def __init__(self, source: RowReader | BatchReader, stored: Unischema, schema: Unischema,
                 ngram: NGram | None, transform_spec: TransformSpec | None) -> None:
        self._source = source
        self._stored = stored.fields  # the fields as read, before transform_spec
        self.schema = schema
        """The :class:`Unischema` of what the reader yields (after ``transform_spec``)."""
        self.ngram = ngram
        self._transform = transform_spec
        self._items: Iterator[Any] = self._generate()
        self.last_row_consumed = False
        self.stopped = False

    @property
    def batched_output(self) -> bool:
        """Whether items are batches (:func:`make_batch_reader`) rather than rows."""
        return isinstance(self._source, BatchReader)

    @property
    def diagnostics(self) -> dict[str, Any]:
        """Petastorm's reader diagnostics; pfio keeps none (an empty dict)."""
        return {}

    def __iter__(self) -> Reader:
        return self

    def __next__(self) -> Any:
        if self.stopped:
            raise RuntimeError("this reader was stopped (its `with` block ended, or stop() "
                               "was called): make a new one to read again")
        try:
            return next(self._items)
        except StopIteration:
            self.last_row_consumed = True
            raise

    def next(self) -> Any:
        """The next item (Python 2's spelling, kept by Petastorm)."""
        return self.__next__()

    def reset(self) -> None:
        """Read the ``num_epochs`` passes again (the next epochs of the shuffling), once
        every item was read.

        Raises:
            NotImplementedError: items are left (as Petastorm).
        """
        if not self.last_row_consumed:
            raise NotImplementedError("a reader can be reset only once every item was read")
        source = self._source
        source.set_epoch(source.epoch + (source.num_epochs or 0))
        self.last_row_consumed = False
        self._items = self._generate()

    def stop(self) -> None:
        """Stop reading: background reads end and open files close."""
        self.stopped = True
        close = getattr(self._items, "close", None)
        if close is not None:
            close()

    def join(self) -> None:
        """Wait for the background reads to end (:meth:`stop` already waited for them)."""

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.join()

    def _generate(self) -> Iterator[Any]:
        if isinstance(self._source, BatchReader):
            make = self.schema.namedtuple_class()
            for batch in self._source:
                yield make(**{name: _column(batch[name], field)
                              for name, field in self.schema.fields.items()})
            return
        rng = random.Random(self._source.seed)
        for rows in self._source.groups():
            decoded = [self._row(row) for row in rows]
            if self.ngram is None:
                yield from (self.schema.make_namedtuple(**row) for row in decoded)
                continue
            grams = self.ngram.form(decoded, self.schema)
            if self._source.shuffle_rows:
                rng.shuffle(grams)
            yield from grams

    def _row(self, row: dict[str, Any]) -> dict[str, Any]:
        for name, value in row.items():
            field = self._stored.get(name)
            if field is not None:
                row[name] = field.decode_scalar(value)
        return self._transform.apply_row(row) if self._transform else row


def _column(values: Any, field: UnischemaField) -> Any:
    """A batch column as Petastorm gives it: strings as a NumPy unicode array."""
    if np.dtype(field.numpy_dtype).kind == "U" and isinstance(values, np.ndarray):
        return values.astype(np.str_)
    return values


def make_reader(dataset_url: str, schema_fields: Sequence[UnischemaField | str] | NGram |
                None = None, reader_pool_type: str = "thread", workers_count: int = 10,
                pyarrow_serialize: bool = False, results_queue_size: int = 50,
                seed: int | None = None, shuffle_rows: bool = False,
                shuffle_row_groups: bool = True, shuffle_row_drop_partitions: int = 1,
                predicate: Any = None, rowgroup_selector: Any = None,
                num_epochs: int | None = 1, cur_shard: int | None = None,
                shard_count: int | None = None, shard_seed: int | None = None,
                cache_type: str | None = "null", cache_location: str | None = None,
                cache_size_limit: int | None = None, cache_row_size_estimate: int | None = None,
                cache_extra_settings: dict[str, Any] | None = None,
                hdfs_driver: str = "libhdfs3", transform_spec: TransformSpec | None = None,
                filters: Any = None, storage_options: dict[str, Any] | None = None,
                zmq_copy_buffers: bool = True, filesystem: Any = None,
                convert_early_to_numpy: bool = False) -> Reader:
    """A reader of the rows of the Parquet store ``dataset_url`` (any pfio URL), one
    namedtuple per row, arrays and images decoded by the store's Unischema.

    ``schema_fields``: the fields to read (:class:`UnischemaField` or regular expressions
    that names match whole), or an :class:`~pfio.integrations.petastorm.NGram` to read
    n-grams (``{offset: namedtuple}``); default: every field. A store without a Petastorm
    schema is read with the schema :func:`make_batch_reader` infers. Other arguments are
    Petastorm's; see :mod:`pfio.integrations.petastorm.reader` for how they map.
    """
    _check_unsupported(rowgroup_selector, shuffle_row_drop_partitions)
    ngram = schema_fields if isinstance(schema_fields, NGram) else None
    return _make(RowReader, {}, dataset_url, None if ngram else schema_fields, ngram,
                 reader_pool_type, workers_count, seed, shuffle_rows, shuffle_row_groups,
                 predicate, num_epochs, cur_shard, shard_count, cache_type, cache_location,
                 cache_size_limit, transform_spec, filters)


def make_batch_reader(dataset_url_or_urls: str, schema_fields: Sequence[UnischemaField | str] |
                      None = None, reader_pool_type: str = "thread", workers_count: int = 10,
                      results_queue_size: int = 50, seed: int | None = None,
                      shuffle_rows: bool = False, shuffle_row_groups: bool = True,
                      shuffle_row_drop_partitions: int = 1, predicate: Any = None,
                      rowgroup_selector: Any = None, num_epochs: int | None = 1,
                      cur_shard: int | None = None, shard_count: int | None = None,
                      shard_seed: int | None = None, cache_type: str | None = "null",
                      cache_location: str | None = None, cache_size_limit: int | None = None,
                      cache_row_size_estimate: int | None = None,
                      cache_extra_settings: dict[str, Any] | None = None,
                      hdfs_driver: str = "libhdfs3",
                      transform_spec: TransformSpec | None = None, filters: Any = None,
                      storage_options: dict[str, Any] | None = None,
                      zmq_copy_buffers: bool = True, filesystem: Any = None,
                      convert_early_to_numpy: bool = False) -> Reader:
    """A reader of the Parquet store ``dataset_url_or_urls`` (one URL, any pfio URL) that
    yields a namedtuple of NumPy arrays per row group read (after ``filters`` and
    ``predicate``).

    Any Parquet store works: without a Petastorm schema, the schema is inferred from the
    files (hive partition keys first, then the columns); with one, its codecs decode each
    column a batch at a time. ``schema_fields``: regular expressions that the names of the
    columns to read match whole (or fields). ``transform_spec.func`` takes and returns a
    pandas DataFrame. Other arguments are Petastorm's; see
    :mod:`pfio.integrations.petastorm.reader` for how they map.
    """
    _check_unsupported(rowgroup_selector, shuffle_row_drop_partitions)
    if not isinstance(dataset_url_or_urls, str):
        raise NotImplementedError("pfio's make_batch_reader takes one URL (a store's "
                                  "directory or one .parquet file), not a list")
    return _make(BatchReader, {"batch_size": None}, dataset_url_or_urls, schema_fields, None,
                 reader_pool_type, workers_count, seed, shuffle_rows, shuffle_row_groups,
                 predicate, num_epochs, cur_shard, shard_count, cache_type, cache_location,
                 cache_size_limit, transform_spec, filters)


def _check_unsupported(rowgroup_selector: Any, shuffle_row_drop_partitions: int) -> None:
    if rowgroup_selector is not None:
        raise NotImplementedError("rowgroup_selector (Petastorm's row group indexes) is not "
                                  "supported; use predicate= or filters=")
    if shuffle_row_drop_partitions != 1:
        raise NotImplementedError("shuffle_row_drop_partitions > 1 is not supported; "
                                  "use shuffle_rows=True")


def _make(kind: type[RowReader] | type[BatchReader], options: dict[str, Any], url: str,
          schema_fields: Any, ngram: NGram | None, pool: str, workers: int, seed: int | None,
          shuffle_rows: bool, shuffle_row_groups: bool, predicate: Any,
          num_epochs: int | None, cur_shard: int | None, shard_count: int | None,
          cache_type: str | None, cache_location: str | None, cache_size_limit: int | None,
          transform_spec: TransformSpec | None, filters: Any) -> Reader:
    if pool not in POOL_TYPES:
        raise ValueError(f"reader_pool_type must be one of {POOL_TYPES}, not {pool!r}")
    if (cur_shard is None) != (shard_count is None) or (
            shard_count is not None and not 0 <= int(cur_shard or 0) < shard_count):
        raise ValueError(f"cur_shard and shard_count go together, with 0 <= cur_shard < "
                         f"shard_count (got {cur_shard}, {shard_count})")
    stored = load_unischema(url)
    batched = kind is BatchReader
    source = kind(url, **options, filters=filters, predicate=predicate,
                  num_epochs=num_epochs, shuffle=shuffle_row_groups, shuffle_rows=shuffle_rows,
                  seed=random.randrange(2**31) if seed is None else seed,
                  rank=cur_shard or 0, world_size=shard_count or 1, shard_by_index=True,
                  prefetch=0 if pool == "dummy" else max(1, workers),
                  schema=stored.to_pfio() if stored is not None else None,
                  cache=_cache(cache_type, cache_location, cache_size_limit),
                  transform_spec=transform_spec if batched else None)
    if shard_count is not None and len(source.row_groups) < shard_count:
        raise NoDataAvailableError(f"{url} has {len(source.row_groups)} row groups, fewer "
                                   f"than the {shard_count} shards asked for")
    schema = stored if stored is not None else _inferred(source)
    if ngram is not None:
        ngram.resolve(schema)
        view = schema.create_schema_view(ngram.field_names())
    else:
        view = schema.create_schema_view(schema_fields) if schema_fields else schema
    if not view.fields:
        raise ValueError(f"no field of {url} matches {schema_fields!r}: {list(schema.fields)}")
    source.select(list(view.fields))
    output = _transformed(view, transform_spec) if transform_spec else view
    return Reader(source, view, output, ngram, None if batched else transform_spec)


def _inferred(source: RowReader | BatchReader) -> Unischema:
    """The schema of a store without a Petastorm one: hive partition keys first, then the
    fields of a pfio schema stored in the files, else the files' columns."""
    inferred = Unischema.from_arrow(source.arrow_schema, source.partitions.types)
    if source.schema is None:
        return inferred
    stored = Unischema.from_pfio(source.schema)
    return Unischema(stored.name, [f for name, f in inferred.fields.items()
                                   if name in source.partitions.types]
                     + list(stored.fields.values()))


def _transformed(view: Unischema, spec: TransformSpec) -> Unischema:
    """``view`` as ``spec`` changes it: fields kept as they were, edited ones as given."""
    before = view.to_pfio()
    after = spec.apply_schema(before)
    return Unischema(f"{view.name}_transformed", [
        view.fields[name] if before.fields.get(name) == field
        else Unischema.from_pfio(after).fields[name] for name, field in after.fields.items()])


def _cache(cache_type: str | None, location: str | None, size_limit: int | None
           ) -> ObjectCache | None:
    if cache_type in (None, "null"):
        return None
    if cache_type != "local-disk":
        raise ValueError(f"cache_type must be 'null' or 'local-disk', not {cache_type!r}")
    if not location:
        raise ValueError("cache_type='local-disk' needs cache_location (a local directory)")
    return ObjectCache(location, max_bytes=size_limit)
