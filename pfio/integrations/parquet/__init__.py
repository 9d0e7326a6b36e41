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

Features that Petastorm users know: ``predicate=`` keeps the rows a Python test accepts
(:mod:`~pfio.integrations.parquet.predicates`: ``in_set``, ``in_lambda``, ``in_negate``,
``in_reduce``, ``in_intersection``, ``in_pseudorandom_split``); ``num_epochs=`` repeats the
dataset (None: forever), reshuffled each epoch; ``transform_spec=`` (:class:`TransformSpec`)
applies a function to each row, or to each batch as a pandas DataFrame, and edits the schema
the reader reports as ``output_schema``; :func:`register_codec` adds codecs that fields (and
stored schemas) can name::

    from pfio.integrations.parquet.predicates import in_set
    reader = RowReader(url, predicate=in_set({"cat", "dog"}, "label"), num_epochs=2,
                       shuffle=True, transform_spec=TransformSpec(selected_fields=["image"]))
"""

from .codecs import register_codec, unregister_codec
from .reader import BatchReader, ParquetReader, RowReader
from .schema import Field, Schema
from .transform import TransformSpec
from .writer import write_dataset

__all__ = ["BatchReader", "Field", "ParquetReader", "RowReader", "Schema", "TransformSpec",
           "register_codec", "unregister_codec", "write_dataset"]
