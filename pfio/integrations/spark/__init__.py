"""Spark and pfio: Spark writes pfio datasets, reads and writes through pfio, feeds torch.

* :func:`column_metadata` marks a Spark column as a pfio field, so ``df.write.parquet(url)``
  (on any cluster: S3A, HDFS, local) writes datasets pfio's readers decode, schema included::

      df.select(F.col("features").alias("features", metadata=column_metadata(
          Field("features", np.float32, (4,), "ndarray"))), "label").write.parquet(url)
      BatchReader(url)  # features: (N, 4) float32 arrays

* :func:`register` adds the ``pfio`` format to a session: ``spark.read.format("pfio")
  .load(url)`` and ``df.write.format("pfio").save(url)`` on every pfio URL (``s3://``
  without hadoop-aws), with column selection, filter pushdown (where Spark keeps pushed
  filters to their query) and a staged commit.
* :func:`make_converter` (alias :func:`make_spark_converter`, after Petastorm's) writes a
  DataFrame once to a cache URL as a pfio dataset and hands out torch DataLoaders over it.

Datasets that pfio writes (``write_dataset``: ``part-*.parquet`` files side by side) are
read by ``spark.read.parquet(url)`` without options.
"""

from .converter import SparkConverter, make_converter, make_spark_converter
from .datasource import FORMAT, PfioDataSource, register
from .schemas import column_metadata

__all__ = ["FORMAT", "PfioDataSource", "SparkConverter", "column_metadata", "make_converter",
           "make_spark_converter", "register"]
