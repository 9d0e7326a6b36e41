"""``make_converter``: a DataFrame materialised once, read back through torch DataLoaders."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspark")
torch = pytest.importorskip("torch")

from pyspark.sql import functions as F  # noqa: E402

from pfio.integrations.parquet import Field  # noqa: E402
from pfio.integrations.spark import (  # noqa: E402
    column_metadata,
    make_converter,
    make_spark_converter,
)

pytestmark = pytest.mark.spark


def _frame(spark, n: int = 20):
    df = spark.createDataFrame([(k, [float(k)] * 3) for k in range(n)],
                               "label long, features array<float>")
    return df.select("label", F.col("features").alias("features", metadata=column_metadata(
        Field("features", np.float32, (3,), "ndarray"))))


def test_dataloader_yields_tensor_batches(spark, tmp_path):
    converter = make_converter(_frame(spark), str(tmp_path / "cache"))
    assert len(converter) == 20
    with converter.torch_dataloader(batch_size=8, num_epochs=1) as loader:
        batches = list(loader)
    assert [len(b["label"]) for b in batches] == [8, 8, 4]
    assert batches[0]["features"].shape == (8, 3)
    assert batches[0]["features"].dtype == torch.float32
    labels = torch.cat([b["label"] for b in batches]).tolist()
    assert sorted(labels) == list(range(20))


def test_num_epochs_repeats(spark, tmp_path):
    converter = make_converter(_frame(spark, 6), str(tmp_path / "cache"))
    with converter.make_torch_dataloader(batch_size=6, num_epochs=2) as loader:
        assert len(list(loader)) == 2


def test_the_same_dataframe_is_materialised_once(spark, tmp_path):
    df = _frame(spark)
    first = make_converter(df, str(tmp_path / "cache"))
    stamp = (tmp_path / "cache" / first.url.rsplit("/", 1)[1] / "_SUCCESS").stat().st_mtime_ns
    second = make_spark_converter(df, str(tmp_path / "cache"))
    assert second.url == first.url
    assert (tmp_path / "cache" / first.url.rsplit("/", 1)[1] / "_SUCCESS").stat(
        ).st_mtime_ns == stamp


def test_other_dataframes_get_other_datasets(spark, tmp_path):
    first = make_converter(_frame(spark, 4), str(tmp_path / "cache"))
    second = make_converter(_frame(spark, 5), str(tmp_path / "cache"))
    assert first.url != second.url and len(second) == 5


def test_delete_removes_the_dataset(spark, tmp_path):
    converter = make_converter(_frame(spark, 4), str(tmp_path / "cache"))
    converter.delete()
    assert list((tmp_path / "cache").iterdir()) == []


def test_converter_on_s3(spark, s3_env, s3_bucket):
    converter = make_converter(_frame(spark, 10), f"s3://{s3_bucket}/cache")
    with converter.torch_dataloader(batch_size=10, num_epochs=1, shuffle=True) as loader:
        batch = next(iter(loader))
    assert sorted(batch["label"].tolist()) == list(range(10))
