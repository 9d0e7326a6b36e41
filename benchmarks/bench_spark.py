"""Spark scanning a pfio dataset: ``spark.read.format("pfio")`` (Spark's Python Data Source
API, reading through pfio) against Spark's own ``spark.read.parquet`` of the same local
files (issue 26).

A dataset of 8 files (a (16,) float32 array column and an int64 label) written by pfio's
``write_dataset``; rows/s of a full scan that sums both columns on a ``local[2]`` session.
For information (no target): the Python path of Spark's data sources (rows cross from the
Python worker to the JVM as Arrow batches) costs several times Spark's vectorised reader.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, best_of, main  # noqa: E402


def run(quick: bool) -> list[Row]:
    import numpy as np
    from pyspark.sql import SparkSession

    from pfio.integrations.parquet import Field, Schema, write_dataset
    from pfio.integrations.spark import register

    rows = 40_000 if quick else 400_000
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("pfio-bench")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.pyspark.python", sys.executable).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    schema = Schema([Field("features", np.float32, (16,), "ndarray"),
                     Field("label", np.int64, (), "scalar")])
    try:
        with tempfile.TemporaryDirectory() as tmp:
            per_file = rows // 8
            for part in range(8):
                write_dataset(tmp, schema, ({"features": np.full(16, k, np.float32),
                                             "label": k}
                                            for k in range(part * per_file,
                                                           (part + 1) * per_file)),
                              row_group_size=10_000, prefix=f"part-{part:05d}")

            def scan(fmt: str) -> None:
                df = spark.read.format(fmt).load(tmp)
                df.selectExpr("sum(label)", "sum(features[0])").collect()

            scan("pfio")  # start the Python workers
            ours = best_of(lambda: scan("pfio"), 3)
            theirs = best_of(lambda: scan("parquet"), 3)
    finally:
        spark.stop()
    metric = f"full scan, {rows} rows x (16 floats + int64), local files"
    return [Row("spark", metric, rows / ours, "spark.read.parquet (Spark's own reader)",
                rows / theirs, None, unit="rows/s")]


if __name__ == "__main__":
    main(run)
