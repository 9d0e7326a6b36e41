"""A Spark DataFrame, written once to a cache URL as a pfio dataset, fed to PyTorch.

The shape of Petastorm's ``make_spark_converter``::

    converter = make_converter(df, "s3://bucket/cache")
    with converter.torch_dataloader(batch_size=64, num_epochs=1) as loader:
        for batch in loader:  # dicts of tensors
            ...

The DataFrame is written through ``format("pfio")`` under ``cache_url/<key>``, where the
key is derived from the DataFrame's plan and schema: converting the same DataFrame again
reuses the dataset when its write completed (``_SUCCESS``). Every Spark task must reach
``cache_url`` (a shared filesystem or an object store; ``mem://`` is per process and does
not work). Columns with :func:`~pfio.integrations.spark.column_metadata` come back decoded.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Iterator
from typing import Any

from pyspark.sql import DataFrame

from ...api import from_url
from ..parquet import ParquetReader
from .datasource import FORMAT, register
from .staging import SUCCESS

logger = logging.getLogger(__name__)


class SparkConverter:
    """A materialised DataFrame: the pfio dataset at :attr:`url` and its row count."""

    def __init__(self, url: str) -> None:
        self.url = url
        reader = ParquetReader(url, decode=False, rank=0, world_size=1)
        self.dataset_size = sum(group.num_rows for group in reader.row_groups)
        """The number of rows."""

    def __len__(self) -> int:
        return self.dataset_size

    @contextlib.contextmanager
    def torch_dataloader(self, batch_size: int = 32, num_epochs: int | None = None,
                         shuffle: bool = False, seed: int = 0, num_workers: int = 0,
                         **reader_options: Any) -> Iterator[Any]:
        """A ``torch.utils.data.DataLoader`` of batches (dicts of tensors; arrays of
        fixed shape as ``(N, *shape)`` tensors), for the ``with`` block.

        Args:
            batch_size: rows per batch (the last one may be smaller).
            num_epochs: passes over the data (None: forever, as in Petastorm).
            shuffle, seed: shuffle row groups and rows, reproducibly.
            num_workers: DataLoader worker processes (each reads its own row groups).
            reader_options: other arguments of
                :class:`~pfio.integrations.parquet.BatchReader` (``columns``,
                ``filters``, ``rank``/``world_size``, ``transform_spec``...).
        """
        import torch.utils.data

        from ..torch.parquet import ParquetBatchDataset

        dataset = ParquetBatchDataset(self.url, batch_size=batch_size, num_epochs=num_epochs,
                                      shuffle=shuffle, seed=seed, **reader_options)
        yield torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=num_workers)

    make_torch_dataloader = torch_dataloader

    def delete(self) -> None:
        """Remove the materialised dataset."""
        with from_url(self.url.rsplit("/", 1)[0]) as fs:
            fs.remove(self.url.rsplit("/", 1)[1], recursive=True)


def make_converter(df: DataFrame, cache_url: str, row_group_size: int = 1024,
                   compression: str = "snappy") -> SparkConverter:
    """Write ``df`` under ``cache_url`` as a pfio dataset (once: a completed write of the
    same DataFrame is reused) and return its :class:`SparkConverter`.

    Args:
        df: the DataFrame (its session gets the ``pfio`` format, see
            :func:`~pfio.integrations.spark.register`).
        cache_url: a directory every Spark task reaches (any pfio URL but ``mem://``).
        row_group_size: rows per row group (the unit of shuffling and of DataLoader
            workers' shares).
        compression: Parquet compression codec.
    """
    url = f"{cache_url.rstrip('/')}/{cache_key(df)}"
    with from_url(url, create=True) as fs:
        done = fs.exists(SUCCESS)
    if done:
        logger.info("%s: reusing the materialised DataFrame", url)
    else:
        register(df.sparkSession)
        (df.write.format(FORMAT).mode("overwrite").option("row_group_size", row_group_size)
         .option("compression", compression).save(url))
    return SparkConverter(url)


#: Petastorm's name of :func:`make_converter`
make_spark_converter = make_converter


def cache_key(df: DataFrame) -> str:
    """The directory name of ``df``'s dataset in a cache: its plan's semantic hash and its
    schema (column metadata included), hashed."""
    digest = hashlib.sha256(f"{df.semanticHash()}\n{df.schema.json()}".encode())
    return f"df-{digest.hexdigest()[:24]}"
