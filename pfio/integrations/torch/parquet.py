"""PyTorch adapters of the Parquet readers: iterable datasets of rows and of batches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import torch.utils.data

from ..parquet.reader import BatchReader, RowReader


class ParquetRowDataset(torch.utils.data.IterableDataset[dict[str, Any]]):
    """Rows of a Parquet dataset; each DataLoader worker reads its own row groups.

    Keyword arguments are those of :class:`~pfio.integrations.parquet.RowReader`.
    Call :meth:`set_epoch` before each epoch to reshuffle.
    """

    def __init__(self, url: str, **kwargs: Any) -> None:
        self.reader = RowReader(url, **kwargs)

    def set_epoch(self, epoch: int) -> None:
        self.reader.set_epoch(epoch)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.reader)


class ParquetBatchDataset(torch.utils.data.IterableDataset[dict[str, Any]]):
    """Batches of a Parquet dataset (use ``DataLoader(batch_size=None)``).

    With ``tensors=True`` numeric NumPy arrays become tensors. Other keyword arguments are
    those of :class:`~pfio.integrations.parquet.BatchReader`.
    """

    def __init__(self, url: str, batch_size: int = 64, tensors: bool = True,
                 **kwargs: Any) -> None:
        self.reader = BatchReader(url, batch_size=batch_size, **kwargs)
        self.tensors = tensors

    def set_epoch(self, epoch: int) -> None:
        self.reader.set_epoch(epoch)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for batch in self.reader:
            yield {k: _tensor(v) for k, v in batch.items()} if self.tensors else batch


def _tensor(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        # decoded columns may be read-only views of Arrow memory: tensors need their own
        return torch.from_numpy(value if value.flags.writeable else value.copy())
    return value
