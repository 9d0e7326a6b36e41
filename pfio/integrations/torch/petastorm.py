"""Petastorm's ``petastorm.pytorch`` loaders over the readers of
:mod:`pfio.integrations.petastorm` (imported, as Petastorm's are, from
:mod:`pfio.integrations.petastorm.pytorch`): :class:`DataLoader` (rows collated into batches),
:class:`BatchedDataLoader` (columns of tensors, for batch readers), and
:class:`InMemBatchedDataLoader` (everything in memory once, then epochs of batches).

Values are promoted to types torch takes, as Petastorm does: uint16 to int32, uint32 to
int64, bool to uint8; a None value, or an array of strings or objects, is a TypeError. A
second ``for`` loop over a loader resets the reader (every item must have been read).
"""

from __future__ import annotations

import collections.abc
import decimal
import logging
import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from torch.utils.data import default_collate

logger = logging.getLogger(__name__)

_PROMOTIONS = {np.dtype(np.uint16): np.int32, np.dtype(np.uint32): np.int64,
               np.dtype(np.bool_): np.uint8}


def decimal_friendly_collate(batch: list[Any]) -> Any:
    """torch's ``default_collate``, except that ``decimal.Decimal`` values and strings are
    collated into lists, and mappings and sequences are collated key by key and place by
    place."""
    first = batch[0]
    if isinstance(first, (decimal.Decimal, str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        return {key: decimal_friendly_collate([item[key] for item in batch]) for key in first}
    if isinstance(first, collections.abc.Sequence):
        return [decimal_friendly_collate(list(items)) for items in zip(*batch, strict=True)]
    return default_collate(batch)


def sanitize(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (a row or a batch, by field) with NumPy types promoted to those torch
    takes (and read-only arrays copied).

    Raises:
        TypeError: a None value, or an array of strings or objects.
    """
    out = {}
    for name, value in values.items():
        if value is None:
            raise TypeError(f"PyTorch takes no None: field {name!r} is None (nullable)")
        if isinstance(value, (np.ndarray, np.generic)):
            if value.dtype.kind in "SUO":
                if isinstance(value, np.ndarray):
                    raise TypeError(f"PyTorch takes no arrays of strings or objects: field "
                                    f"{name!r} is {value.dtype}")
            else:
                promoted = _PROMOTIONS.get(value.dtype)
                if promoted is not None:
                    value = value.astype(promoted)
                elif isinstance(value, np.ndarray) and not value.flags.writeable:
                    value = value.copy()  # a view of Arrow memory: tensors want their own
        out[name] = value
    return out


class LoaderBase:
    """What the loaders share: one pass at a time, a new pass resets the reader, and a
    failed pass stops the loader."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self._in_iter: bool | None = None
        self._error: BaseException | None = None

    def __iter__(self) -> Iterator[Any]:
        if self._error is not None:
            raise RuntimeError(f"a pass of this loader failed ({self._error!r}): make a new "
                               "reader and loader")
        if self._in_iter:
            raise RuntimeError("a pass of this loader is under way: finish it before "
                               "starting another, or make a new reader and loader")
        if self._in_iter is not None:
            logger.info("new pass of the loader: resetting the reader")
            self.reader.reset()
        self._in_iter = True
        try:
            yield from self._batches()
        except Exception as exc:
            self._error = exc
            raise
        finally:
            self._in_iter = False

    def _batches(self) -> Iterator[Any]:
        raise NotImplementedError

    def __enter__(self) -> LoaderBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.reader.stop()
        self.reader.join()


class DataLoader(LoaderBase):
    """Batches of ``batch_size`` rows of ``reader``, merged by ``collate_fn`` (the last batch
    may be smaller); the number of epochs is the reader's.

    Args:
        reader: a reader of :func:`~pfio.integrations.petastorm.make_reader` (rows) or
            :func:`~pfio.integrations.petastorm.make_batch_reader` (batches are split into
            rows).
        batch_size: rows per batch.
        collate_fn: merges a list of row dicts into a batch.
        shuffling_queue_capacity: when > 0, rows go through a buffer of this many and come
            out in random order (no batch until the buffer is full, then drained at the end).
    """

    def __init__(self, reader: Any, batch_size: int = 1,
                 collate_fn: Callable[[list[Any]], Any] = decimal_friendly_collate,
                 shuffling_queue_capacity: int = 0) -> None:
        super().__init__(reader)
        self.batch_size = batch_size
        self.collate_fn = collate_fn
        self.shuffling_queue_capacity = shuffling_queue_capacity

    def _rows(self) -> Iterator[dict[str, Any]]:
        for item in self.reader:
            values = item._asdict()
            if not self.reader.batched_output:
                yield sanitize(values)
                continue
            for i in range(len(next(iter(values.values())))):
                yield sanitize({name: column[i] for name, column in values.items()})

    def _batches(self) -> Iterator[Any]:
        batch: list[dict[str, Any]] = []
        buffer: list[dict[str, Any]] = []
        rng = random.Random()
        capacity = self.shuffling_queue_capacity

        def take() -> dict[str, Any]:
            i = rng.randrange(len(buffer))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            return buffer.pop()

        for row in self._rows():
            if capacity <= 0:
                batch.append(row)
            else:
                buffer.append(row)
                if len(buffer) < capacity:
                    continue
                batch.append(take())
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        while buffer:
            batch.append(take())
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch:
            yield self.collate_fn(batch)


class BatchedDataLoader(LoaderBase):
    """Batches of ``batch_size`` rows as dicts of tensors, made a column at a time (faster
    than :class:`DataLoader` for small rows; strings and decimals are not supported).

    Args:
        reader: a reader (best: of :func:`~pfio.integrations.petastorm.make_batch_reader`).
        batch_size: rows per batch (the last batch may be smaller).
        transform_fn: turns a column (a NumPy array) into a tensor (default
            ``torch.as_tensor``).
        shuffling_queue_capacity: when > 0, rows go through a buffer of this many and come
            out in random order.
    """

    def __init__(self, reader: Any, batch_size: int = 1,
                 transform_fn: Callable[[Any], torch.Tensor] | None = None,
                 shuffling_queue_capacity: int = 0) -> None:
        super().__init__(reader)
        self.batch_size = batch_size
        self.transform_fn = transform_fn or torch.as_tensor
        self.shuffling_queue_capacity = shuffling_queue_capacity

    def _batches(self) -> Iterator[dict[str, torch.Tensor]]:
        buffer = _TensorBuffer(self.batch_size, self.shuffling_queue_capacity)
        for columns in _tensor_columns(self.reader, self.transform_fn):
            buffer.add(columns)
            yield from buffer.batches(final=False)
        yield from buffer.batches(final=True)


class InMemBatchedDataLoader:
    """Up to ``rows_capacity`` rows of ``reader`` loaded into memory once (the reader is
    then stopped), served as ``num_epochs`` epochs of batches of ``batch_size``, shuffled
    with ``seed + epoch`` if ``shuffle``. One ``for`` loop only: give all epochs here.

    Args:
        reader: a reader (best: of :func:`~pfio.integrations.petastorm.make_batch_reader`).
        batch_size: rows per batch (the last batch of an epoch may be smaller).
        transform_fn: turns a column into a tensor (default ``torch.as_tensor``).
        num_epochs: epochs served.
        seed: base of the shuffling.
        rows_capacity: the most rows loaded.
        shuffle: shuffle the rows of each epoch.
    """

    def __init__(self, reader: Any, batch_size: int = 1,
                 transform_fn: Callable[[Any], torch.Tensor] | None = None,
                 num_epochs: int = 1, seed: int = 0, rows_capacity: int = 1024,
                 shuffle: bool = False) -> None:
        self.batch_size = batch_size
        self.num_epochs = num_epochs
        self.seed = seed
        self.shuffle = shuffle
        self._in_iter = False
        parts: dict[str, list[torch.Tensor]] = {}
        rows = 0
        try:
            for columns in _tensor_columns(reader, transform_fn or torch.as_tensor):
                take = min(rows_capacity - rows, len(next(iter(columns.values()))))
                for name, tensor in columns.items():
                    parts.setdefault(name, []).append(tensor[:take])
                rows += take
                if rows >= rows_capacity:
                    break
        finally:
            reader.stop()
            reader.join()
        self._columns = {name: torch.cat(tensors) for name, tensors in parts.items()}
        self.rows = rows

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        if self._in_iter:
            raise RuntimeError("InMemBatchedDataLoader serves one loop: pass num_epochs to "
                               "its constructor")
        self._in_iter = True
        for epoch in range(self.num_epochs):
            if self.shuffle:
                generator = torch.Generator().manual_seed(self.seed + epoch)
                order = torch.randperm(self.rows, generator=generator)
            else:
                order = torch.arange(self.rows)
            for start in range(0, self.rows, self.batch_size):
                index = order[start:start + self.batch_size]
                yield {name: column[index] for name, column in self._columns.items()}

    def __enter__(self) -> InMemBatchedDataLoader:
        return self

    def __exit__(self, *exc: object) -> None:
        """Nothing to release: the reader was stopped once loaded."""


def _tensor_columns(reader: Any, transform_fn: Callable[[Any], torch.Tensor]
                    ) -> Iterator[dict[str, torch.Tensor]]:
    """Each item of ``reader`` as columns of tensors (a row is a column of one)."""
    for item in reader:
        values = sanitize(item._asdict())
        yield {name: transform_fn(value if reader.batched_output else [value])
               for name, value in values.items()}


class _TensorBuffer:
    """Rows waiting to be batched, as columns of tensors; with a capacity, batches are drawn
    at random once that many rows wait."""

    def __init__(self, batch_size: int, capacity: int) -> None:
        self.batch_size = batch_size
        self.capacity = capacity
        self.columns: dict[str, torch.Tensor] = {}

    def add(self, columns: dict[str, torch.Tensor]) -> None:
        if not self.columns:
            self.columns = dict(columns)
        else:
            self.columns = {name: torch.cat([self.columns[name], columns[name]])
                            for name in self.columns}

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def batches(self, final: bool) -> Iterator[dict[str, torch.Tensor]]:
        keep = 0 if final else max(0, self.capacity - 1)
        while len(self) >= keep + self.batch_size or (final and len(self)):
            size = min(self.batch_size, len(self))
            taken = (torch.randperm(len(self))[:size] if self.capacity > 0
                     else torch.arange(size))
            yield {name: column[taken] for name, column in self.columns.items()}
            kept = torch.ones(len(self), dtype=torch.bool)
            kept[taken] = False
            self.columns = {name: column[kept] for name, column in self.columns.items()}
