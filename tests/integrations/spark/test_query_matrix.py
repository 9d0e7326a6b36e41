"""``format("pfio")`` answers every query shape as Spark's own Parquet reader does: the same
query on ``spark.read.format("pfio").load(url)`` (on a local directory and on S3) and on
``spark.read.parquet`` of the same files, row for row.

Each place's DataFrame is loaded once and every query of the matrix runs on it, in turn, as
users do: issue 37's wrong sum (``df.select("label").groupBy().sum("label")`` 1,400, not
1,800) came from a filter an earlier query on the same DataFrame had pushed.

The dataset: 400 rows in three files whose row groups differ in size, with an array, a
uint8 (read by Spark as smallint), an int64, a string and a nullable column.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from pfio.integrations.parquet import Field, Schema, write_dataset  # noqa: E402
from pfio.integrations.spark import register  # noqa: E402

pytestmark = pytest.mark.spark

ROWS = 400
NAMES = ["cat", "dog", "bird", "fish"]
SCHEMA = Schema([Field("id", np.int64, (), "scalar"),
                 Field("features", np.float32, (4,), "ndarray"),
                 Field("small", np.uint8, (), "scalar"),
                 Field("label", np.int64, (), "scalar"),
                 Field("name", np.str_, (), "scalar"),
                 Field("maybe", np.int64, (), "scalar", nullable=True)])
#: (first row, rows, row group size) of each file
FILES = [(0, 150, 40), (150, 130, 25), (280, 120, 50)]


def _row(k: int) -> dict:
    return {"id": k, "features": np.arange(k, k + 4, dtype=np.float32), "small": k % 256,
            "label": k % 10, "name": NAMES[k % 4], "maybe": None if k % 7 == 0 else k * 3}


@pytest.fixture(scope="module")
def places(tmp_path_factory, moto_server) -> dict[str, str]:
    """The dataset's URL on each place (``local``, ``s3``: the same files uploaded), and
    ``parquet``: the local directory, for ``spark.read.parquet``."""
    import boto3

    root = tmp_path_factory.mktemp("matrix") / "ds"
    for n, (first, rows, group) in enumerate(FILES):
        write_dataset(str(root), SCHEMA, (_row(k) for k in range(first, first + rows)),
                      row_group_size=group, prefix=f"part-{n:05d}")
    bucket = "pfio-test-spark-matrix"
    creds = moto_server.credentials
    client = boto3.client("s3", endpoint_url=moto_server.endpoint,
                          region_name=creds["AWS_DEFAULT_REGION"],
                          aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])
    client.create_bucket(Bucket=bucket)
    for path in sorted(Path(root).rglob("*.parquet")):
        client.upload_file(str(path), bucket, f"ds/{path.relative_to(root)}")
    client.close()
    return {"local": str(root), "s3": f"s3://{bucket}/ds", "parquet": str(root)}


@pytest.fixture(scope="module")
def frames(spark, places) -> dict[str, DataFrame]:
    """One DataFrame per place, shared by every query of the module."""
    return {"local": spark.read.format("pfio").load(places["local"]),
            "s3": spark.read.format("pfio").load(places["s3"]),
            "parquet": spark.read.parquet(places["parquet"])}


Query = Callable[[DataFrame], DataFrame]

QUERIES: dict[str, Query] = {
    "all": lambda df: df,
    "select": lambda df: df.select("label"),
    "select-two-reordered": lambda df: df.select("name", "id"),
    "select-expression": lambda df: df.select(F.col("features")[2].alias("f2"), "small"),
    "select-sum": lambda df: df.select("label").groupBy().sum("label"),
    "sum": lambda df: df.groupBy().sum("label"),
    "count": lambda df: df.groupBy().count(),
    "select-count": lambda df: df.select("maybe").groupBy().count(),
    "filter-pushed": lambda df: df.filter((F.col("label") >= 3) & (F.col("small") < 200)),
    "filter-in-or": lambda df: df.filter(F.col("label").isin(1, 4) | (F.col("id") > 390)),
    "filter-string": lambda df: df.filter(F.col("name").startswith("b")),
    "filter-null": lambda df: df.filter(F.col("maybe").isNull()),
    "filter-not-null": lambda df: df.filter(F.col("maybe").isNotNull()),
    "filter-spark-only": lambda df: df.filter(F.col("id") % 3 == 1),
    "filter-widened": lambda df: df.filter(F.col("small") > 120),
    "filter-select": lambda df: df.filter(F.col("label") > 6).select("id"),
    "select-filter": lambda df: df.select("id", "label").filter("label = 2"),
    "groupby-count": lambda df: df.groupBy("label").count(),
    "groupby-agg": lambda df: df.groupBy("name").agg(F.sum("label"), F.max("small"),
                                                     F.count("maybe"), F.avg("id")),
    "select-filter-groupby": lambda df: df.select("name", "label", "maybe")
    .filter(F.col("maybe") > 100).groupBy("name").agg(F.sum("label"), F.sum("maybe")),
    "groupby-filter": lambda df: df.groupBy("label").count().filter("count > 39"),
    "distinct": lambda df: df.select("name").distinct(),
    "order-limit": lambda df: df.orderBy(F.desc("id")).limit(7),
    "select-order-limit": lambda df: df.select("label", "id").orderBy("id").limit(13),
    "filter-order-limit": lambda df: df.filter("label = 5").orderBy("id").limit(4),
    "limit-sum": lambda df: df.orderBy("id").limit(100).groupBy().sum("label"),
    "groupby-order-limit": lambda df: df.groupBy("label").agg(F.sum("id").alias("s"))
    .orderBy(F.desc("s")).limit(3),
    "array-sum": lambda df: df.select(F.col("features")[0].alias("f")).groupBy().sum("f"),
}


def _rows(df: DataFrame) -> list[tuple]:
    return sorted((tuple(row) for row in df.collect()), key=repr)


@pytest.mark.parametrize("place", ["local", "s3"])
@pytest.mark.parametrize("query", list(QUERIES))
def test_pfio_answers_as_spark_parquet(frames, place, query):
    ours = QUERIES[query](frames[place])
    theirs = QUERIES[query](frames["parquet"])
    assert ours.columns == theirs.columns
    assert _rows(ours) == _rows(theirs)


def test_the_matrix_has_every_row(frames):
    """The base of the matrix: the dataset is what the tests think it is."""
    df = frames["local"]
    assert df.count() == ROWS == sum(rows for _, rows, _ in FILES)
    assert df.select("label").groupBy().sum("label").collect()[0][0] == 1800


@pytest.mark.parametrize("query", ["filter-pushed", "filter-select", "select-filter-groupby",
                                   "filter-order-limit"])
def test_pushdown_on_a_dataframe_of_its_own(spark, places, frames, query):
    """``register(spark, pushdown=True)`` takes filters even where Spark shares the pushed
    read between the queries of one DataFrame: right on a DataFrame loaded for the query."""
    register(spark, pushdown=True)
    try:
        ours = QUERIES[query](spark.read.format("pfio").load(places["s3"]))
        assert _rows(ours) == _rows(QUERIES[query](frames["parquet"]))
    finally:
        register(spark)


def test_limit_alone_takes_rows_of_the_dataset(frames):
    """``limit`` without an order takes any rows: as many as asked, all of the dataset."""
    every = set(_rows(frames["parquet"].select("id", "name")))
    taken = _rows(frames["s3"].select("id", "name").limit(9))
    assert len(taken) == 9 and set(taken) <= every

