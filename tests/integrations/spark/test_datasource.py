"""``format("pfio")``: reads and writes through pfio on file and s3 URLs, staged commits,
column selection and filter pushdown."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import functions as F  # noqa: E402

import pfio  # noqa: E402
from pfio.integrations.parquet import BatchReader, Field, Schema, write_dataset  # noqa: E402
from pfio.integrations.spark import column_metadata, register  # noqa: E402
from pfio.integrations.spark.staging import STAGING, SUCCESS  # noqa: E402

pytestmark = pytest.mark.spark

SCHEMA = Schema([Field("features", np.float32, (4,), "ndarray"),
                 Field("small", np.uint8, (), "scalar"),
                 Field("label", np.int64, (), "scalar")])


def _dataset(url: str, n: int = 12) -> str:
    write_dataset(url, SCHEMA, ({"features": np.full(4, k, np.float32), "small": k,
                                 "label": k} for k in range(n)), row_group_size=3)
    return url


def _frame(spark, n: int = 12):
    df = spark.createDataFrame([(k, [float(k)] * 4) for k in range(n)],
                               "label long, features array<float>")
    return df.select("label", F.col("features").alias(
        "features", metadata=column_metadata(SCHEMA.fields["features"])))


def test_read_a_pfio_dataset(spark, tmp_path):
    df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
    rows = sorted(df.collect(), key=lambda r: r.label)
    assert [r.label for r in rows] == list(range(12))
    assert rows[5].features == [5.0] * 4 and rows[5].small == 5


def test_read_schema_carries_pfio_fields(spark, tmp_path):
    df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
    assert df.schema["features"].metadata == column_metadata(SCHEMA.fields["features"])
    assert df.schema["small"].dataType.simpleString() == "smallint"  # uint8 widened


def test_read_splits_row_groups_over_partitions(spark, tmp_path):
    df = spark.read.format("pfio").option("partitions", 3).load(_dataset(str(tmp_path / "ds")))
    assert df.rdd.getNumPartitions() == 3
    assert sorted(df.rdd.glom().map(len).collect()) == [3, 3, 6]


def test_columns_option_selects_columns(spark, tmp_path):
    df = spark.read.format("pfio").option("columns", "label").load(
        _dataset(str(tmp_path / "ds")))
    assert df.columns == ["label"] and df.count() == 12


def test_unknown_columns_are_an_error(spark, tmp_path):
    with pytest.raises(Exception, match="nope"):
        spark.read.format("pfio").option("columns", "label,nope").load(
            _dataset(str(tmp_path / "ds"))).collect()


def test_user_schema_selects_columns(spark, tmp_path):
    df = spark.read.format("pfio").schema("label long").load(_dataset(str(tmp_path / "ds")))
    assert df.columns == ["label"] and sorted(r.label for r in df.collect()) == list(range(12))


@pytest.fixture
def pushdown(spark):
    """The ``pfio`` format registered with filter pushdown, for one test."""
    register(spark, pushdown=True)
    yield
    register(spark)


def test_filters_of_and_and_or_are_exact(spark, pushdown, tmp_path):
    df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
    kept = df.filter((F.col("label") >= 3) & (F.col("label") < 6) | F.col("label").isin(9))
    assert sorted(r.label for r in kept.collect()) == [3, 4, 5, 9]


def _spark_filters(df) -> str:
    """The Filter nodes Spark's plan of ``df`` keeps (those not pushed to the source)."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "\n".join(line for line in plan.splitlines() if "Filter (" in line)


def test_taken_filters_leave_spark_no_filter(spark, pushdown, tmp_path):
    df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
    pushed = df.filter((F.col("label") > 9) & F.col("small").isNotNull())
    assert _spark_filters(pushed) == ""
    assert sorted(r.label for r in pushed.collect()) == [10, 11]


def test_filters_not_taken_stay_with_spark(spark, pushdown, tmp_path):
    df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
    mixed = df.filter((F.col("label") > 5) & (F.col("label") % 2 == 0))
    assert "% 2" in _spark_filters(mixed) and "> 5" not in _spark_filters(mixed)
    assert sorted(r.label for r in mixed.collect()) == [6, 8, 10]


def test_a_filtered_query_leaves_later_queries_of_the_dataframe_alone(spark, tmp_path):
    """Issue 37: Spark 4.3 keeps the read a query's pushed filters planned for every later
    scan of the DataFrame, so a pushed ``label > 4`` made a later sum 1,400 of 1,800."""
    write_dataset(str(tmp_path / "ds"), SCHEMA, ({"features": np.zeros(4, np.float32),
                                                  "small": 0, "label": k % 10}
                                                 for k in range(400)), row_group_size=50)
    df = spark.read.format("pfio").load(str(tmp_path / "ds"))
    assert df.filter("label > 4").count() == 200
    assert df.select("label").groupBy().sum("label").collect()[0][0] == 1800
    assert df.count() == 400


def test_the_default_takes_filters_only_where_spark_keeps_them_to_their_query(spark,
                                                                              tmp_path):
    from pfio.integrations.spark.datasource import pushdown_is_safe

    df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
    kept = _spark_filters(df.filter(F.col("label") > 9))
    assert ("> 9" in kept) is not pushdown_is_safe(spark)


def test_without_pushdown_spark_filters(spark, tmp_path):
    register(spark, pushdown=False)
    try:
        df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
        kept = df.filter(F.col("label") > 9)
        assert "> 9" in _spark_filters(kept)
        assert sorted(r.label for r in kept.collect()) == [10, 11]
    finally:
        register(spark)


def test_write_then_read_back_decoded(spark, tmp_path):
    url = str(tmp_path / "out")
    _frame(spark).write.format("pfio").mode("append").save(url)
    batches = list(BatchReader(url, batch_size=100))
    features = np.concatenate([b["features"] for b in batches])
    assert features.shape == (12, 4) and features.dtype == np.float32
    assert sorted(np.concatenate([b["label"] for b in batches]).tolist()) == list(range(12))


def test_a_pfio_dataset_round_trips_through_spark(spark, tmp_path):
    df = spark.read.format("pfio").load(_dataset(str(tmp_path / "ds")))
    df.write.format("pfio").mode("append").save(str(tmp_path / "copy"))
    reader = BatchReader(str(tmp_path / "copy"), batch_size=100)
    assert reader.schema is not None and reader.schema.fields == SCHEMA.fields
    batch = next(iter(reader))
    assert batch["small"].dtype == np.uint8 and batch["features"].shape == (12, 4)


def test_written_files_are_flat_and_staging_is_gone(spark, tmp_path):
    url = str(tmp_path / "out")
    _frame(spark).repartition(2).write.format("pfio").mode("append").save(url)
    names = sorted(pfio.from_url(url).list())
    assert SUCCESS in names and STAGING not in [n.rstrip("/") for n in names]
    assert len([n for n in names if n.endswith(".parquet")]) == 2
    back = spark.read.parquet(url)  # Spark's own reader takes it, column metadata included
    assert back.count() == 12
    assert back.schema["features"].metadata == column_metadata(SCHEMA.fields["features"])


def test_append_adds_and_overwrite_replaces(spark, tmp_path):
    url = str(tmp_path / "out")
    _frame(spark, 4).write.format("pfio").mode("append").save(url)
    _frame(spark, 4).write.format("pfio").mode("append").save(url)
    assert spark.read.format("pfio").load(url).count() == 8
    _frame(spark, 3).write.format("pfio").mode("overwrite").save(url)
    assert sorted(r.label for r in spark.read.format("pfio").load(url).collect()) == [0, 1, 2]


def test_a_retried_task_leaves_no_duplicate_rows(spark, tmp_path):
    """Each task fails on its first attempt after its writer has staged rows; Spark retries
    it (``local[2,2]``) and the commit publishes the second attempt only."""
    from pyspark import TaskContext

    def fail_first_attempt(batches):
        for i, batch in enumerate(batches):
            yield batch
            if i == 1 and TaskContext.get().attemptNumber() == 0:
                raise RuntimeError("first attempt fails")

    df = spark.range(0, 40, 1, 2).withColumnRenamed("id", "label")
    df = df.mapInArrow(fail_first_attempt, df.schema)
    url = str(tmp_path / "out")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "5")
    try:
        df.write.format("pfio").mode("append").option("row_group_size", 5).save(url)
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    labels = sorted(r.label for r in spark.read.format("pfio").load(url).collect())
    assert labels == list(range(40))
    assert STAGING not in [n.rstrip("/") for n in pfio.from_url(url).list()]


def test_a_failed_job_publishes_nothing(spark, tmp_path):
    def always_fail(batches):
        for batch in batches:
            yield batch
            raise RuntimeError("boom")

    df = spark.range(0, 10, 1, 2).withColumnRenamed("id", "label")
    url = str(tmp_path / "out")
    with pytest.raises(Exception, match="boom"):
        df.mapInArrow(always_fail, df.schema).write.format("pfio").mode("append").save(url)
    with pfio.from_url(url, create=True) as fs:
        assert [n for n in fs.list() if not n.startswith(".")] == []


def test_write_and_read_on_s3(spark, s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/ds"
    _frame(spark).write.format("pfio").mode("append").save(url)
    back = spark.read.format("pfio").load(url).filter("label < 4")
    assert sorted(r.label for r in back.collect()) == [0, 1, 2, 3]
    features = next(iter(BatchReader(url, batch_size=100, columns=["features"])))["features"]
    assert features.shape == (12, 4)


def test_the_default_mode_is_refused_by_spark(spark, tmp_path):
    """Python data sources take append or overwrite only (Spark's rule)."""
    with pytest.raises(Exception, match="Append.*Overwrite"):
        _frame(spark).write.format("pfio").save(str(tmp_path / "out"))


def test_a_missing_dataset_is_an_error(spark, tmp_path):
    with pytest.raises(Exception, match="no such directory"):
        spark.read.format("pfio").load(str(tmp_path / "none")).collect()
