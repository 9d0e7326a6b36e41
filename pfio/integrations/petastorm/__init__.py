"""Petastorm's reading API on pfio: a Petastorm training script runs with its imports changed.

::

    # from petastorm import make_reader, TransformSpec
    # from petastorm.pytorch import DataLoader
    from pfio.integrations.petastorm import make_reader, TransformSpec
    from pfio.integrations.petastorm.pytorch import DataLoader

    with DataLoader(make_reader("s3://bucket/dataset", num_epochs=2), batch_size=64) as loader:
        for batch in loader:
            ...

The modules mirror Petastorm's: :mod:`~pfio.integrations.petastorm.reader`
(``make_reader``, ``make_batch_reader``), ``.unischema`` (``Unischema``,
``UnischemaField``), ``.codecs`` (``ScalarCodec``, ``NdarrayCodec``,
``CompressedNdarrayCodec``, ``CompressedImageCodec``), ``.ngram`` (``NGram``),
``.predicates``, ``.transform`` (``TransformSpec``) and ``.pytorch`` (``DataLoader``,
``BatchedDataLoader``, ``InMemBatchedDataLoader``, ``decimal_friendly_collate``).

Stores Petastorm wrote are read with their schema: the Unischema pickled in
``_common_metadata`` is read by a restricted unpickler that builds only schema classes
(:mod:`~pfio.integrations.petastorm.metadata`) and refuses anything else with
:class:`~pfio.integrations.petastorm.metadata.UnsafePickleError`. Any pfio URL works
(``file``, ``s3``, ``hdfs``, ``mem``, archives). Writing stores (``materialize_dataset``,
``dict_to_spark_row``) is Spark's side and not offered: write with
:func:`pfio.integrations.parquet.write_dataset` (a pfio schema, readable by these readers too).
"""

from ..parquet.transform import TransformSpec
from .codecs import CompressedImageCodec, CompressedNdarrayCodec, NdarrayCodec, ScalarCodec
from .metadata import UnsafePickleError
from .ngram import NGram
from .reader import NoDataAvailableError, Reader, make_batch_reader, make_reader
from .unischema import Unischema, UnischemaField

__all__ = ["CompressedImageCodec", "CompressedNdarrayCodec", "NGram", "NdarrayCodec",
           "NoDataAvailableError", "Reader", "ScalarCodec", "TransformSpec", "Unischema",
           "UnischemaField", "UnsafePickleError", "make_batch_reader", "make_reader"]
