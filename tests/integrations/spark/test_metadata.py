"""Spark writes with pfio column metadata (``df.write.parquet``); Spark reads pfio's layouts."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import functions as F  # noqa: E402

from pfio.integrations.parquet import (  # noqa: E402
    BatchReader,
    Field,
    RowReader,
    Schema,
    write_dataset,
)
from pfio.integrations.parquet.spark_schema import field_arguments  # noqa: E402
from pfio.integrations.spark import column_metadata  # noqa: E402

pytestmark = pytest.mark.spark

FEATURES = Field("features", np.float32, (4,), "ndarray")
GRID = Field("grid", np.float64, (2, 3), "ndarray")


def _frame(spark, n: int = 10):
    rows = [(k, [float(k)] * 4, [[float(k)] * 3] * 2) for k in range(n)]
    df = spark.createDataFrame(rows, "label long, features array<float>, "
                                     "grid array<array<double>>")
    return df.select("label",
                     F.col("features").alias("features", metadata=column_metadata(FEATURES)),
                     F.col("grid").alias("grid", metadata=column_metadata(GRID)))


def test_spark_parquet_with_metadata_reads_as_pfio_arrays(spark, tmp_path):
    _frame(spark).write.parquet(str(tmp_path / "ds"))
    batches = list(BatchReader(str(tmp_path / "ds"), batch_size=10))
    features = np.concatenate([b["features"] for b in batches])
    assert features.shape == (10, 4) and features.dtype == np.float32
    grid = np.concatenate([b["grid"] for b in batches])
    assert grid.shape == (10, 2, 3) and grid.dtype == np.float64
    assert sorted(features[:, 0].tolist()) == [float(k) for k in range(10)]


def test_reader_schema_comes_from_spark_metadata(spark, tmp_path):
    _frame(spark).write.parquet(str(tmp_path / "ds"))
    schema = BatchReader(str(tmp_path / "ds")).schema
    assert schema is not None and sorted(schema.fields) == ["features", "grid"]
    assert schema.fields["features"] == FEATURES


def test_rows_hold_arrays_of_the_field(spark, tmp_path):
    _frame(spark, 3).write.parquet(str(tmp_path / "ds"))
    row = next(iter(RowReader(str(tmp_path / "ds"))))
    assert isinstance(row["features"], np.ndarray) and row["features"].shape == (4,)
    assert row["grid"].shape == (2, 3) and isinstance(row["label"], int)


def test_spark_parquet_without_metadata_is_foreign(spark, tmp_path):
    spark.createDataFrame([(1, [1.0, 2.0])], "a long, v array<float>").write.parquet(
        str(tmp_path / "ds"))
    reader = BatchReader(str(tmp_path / "ds"))
    assert reader.schema is None
    assert next(iter(reader))["v"].shape == (1, 2)  # lists of one length still stack


def test_malformed_field_metadata_names_the_column():
    with pytest.raises(ValueError, match="column 'x'"):
        field_arguments("x", {"pfio": "{not json"})


def test_a_flat_spark_array_takes_a_field_shape_of_more_dimensions(spark, tmp_path):
    matrix = Field("m", np.float32, (2, 3), "ndarray")
    df = spark.createDataFrame([([float(i) for i in range(6)],)], "m array<float>")
    df.select(F.col("m").alias("m", metadata=column_metadata(matrix))
              ).write.parquet(str(tmp_path / "ds"))
    batch = next(iter(BatchReader(str(tmp_path / "ds"))))
    np.testing.assert_array_equal(batch["m"], np.arange(6, dtype=np.float32).reshape(1, 2, 3))


def test_metadata_with_a_wrong_shape_is_an_error(spark, tmp_path):
    wrong = Field("features", np.float32, (5,), "ndarray")
    df = spark.createDataFrame([([1.0] * 4,)], "features array<float>")
    df.select(F.col("features").alias("features", metadata=column_metadata(wrong))
              ).write.parquet(str(tmp_path / "ds"))
    with pytest.raises(ValueError, match="do not match"):
        next(iter(BatchReader(str(tmp_path / "ds"))))


def test_spark_reads_shards_written_side_by_side(spark, tmp_path):
    """The Dask example's layout: each writer its own prefix, files flat."""
    schema = Schema([FEATURES, Field("label", np.int64, (), "scalar")])
    url = str(tmp_path / "ds")
    for shard in range(2):
        write_dataset(url, schema, ({"features": np.full(4, k, np.float32), "label": k}
                                    for k in range(shard * 5, shard * 5 + 5)),
                      row_group_size=2, prefix=f"part-{shard:05d}")
    df = spark.read.parquet(url)
    assert sorted(r.label for r in df.collect()) == list(range(10))
    assert df.schema["features"].dataType.simpleString() == "array<float>"


def test_prefix_cannot_name_a_directory_or_a_hidden_file(tmp_path):
    schema = Schema([Field("label", np.int64, (), "scalar")])
    for prefix in ("a/b", "_x", ".y", ""):
        with pytest.raises(ValueError, match="prefix"):
            write_dataset(str(tmp_path / "ds"), schema, [{"label": 1}], prefix=prefix)
