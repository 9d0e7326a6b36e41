"""Parquet datasets for training, in the style of Petastorm, on any pfio URL.

A :class:`Schema` names each field's NumPy dtype, shape (None for variable dimensions) and codec
(scalars stored natively, fixed-shape numeric ndarrays as Arrow fixed-size lists that batches
decode a column at a time, other ndarrays as ``.npy`` bytes, images as PNG or JPEG). It is
stored in the Parquet file metadata, so readers restore arrays without being told::

    from pfio.integrations.parquet import Field, Schema, write_dataset, BatchReader

    schema = Schema([Field("image", np.uint8, (32, 32, 3), "png"),
                     Field("label", np.int64, (), "scalar")])
    write_dataset("s3://bucket/train", schema, rows, row_group_size=256)
    for batch in BatchReader("s3://bucket/train", batch_size=64, shuffle=True, seed=0):
        ...

Readers work on any Parquet store (foreign files are read with their own Arrow types), select
columns, filter row groups with pyarrow filters, shuffle row groups and rows with a seed and
:meth:`~ParquetReader.set_epoch`, and shard row groups across ranks and DataLoader workers so
that each row group is read by exactly one worker. Hive partition directories
(``root/key=value/...``) become columns. Foreign list columns whose rows share one length
come back from the batch reader as one ``(N, length)`` array. Reads go through pfio file objects, so
file, s3, hdfs, mem and the cache all work, with ranged reads of only the needed column chunks.
"""

from .reader import BatchReader, ParquetReader, RowReader
from .schema import Field, Schema
from .writer import write_dataset

__all__ = ["BatchReader", "Field", "ParquetReader", "RowReader", "Schema", "write_dataset"]
