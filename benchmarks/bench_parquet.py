"""Parquet batch reading from S3 (issue 9).

A dataset of about 200 MiB (8 files, numeric columns) on a moto S3 server; rows/s of
:class:`pfio.integrations.parquet.BatchReader` reading 9 of its columns, against

* petastorm's ``make_batch_reader`` (0.13.1, its last release, in a virtualenv of its own:
  it needs pyarrow 10 and NumPy 1) over the same server, with its thread pool of 4 workers
  (target >= 1.0x);
* plain ``pyarrow.parquet`` reading the same columns from the same server through
  ``pyarrow.fs.S3FileSystem`` (target >= 0.9x).

Each figure is the best of 5 passes, ours and pyarrow's interleaved.

A second part (``--arrays`` runs it alone) decodes a fixed-shape (4,) float32 ndarray column
(written by pfio as Arrow fixed-size lists) from local files: batches/s of the batch reader,
against pyarrow reading the same column and turning each batch into an ``(N, 4)`` array with
``column.combine_chunks().flatten().to_numpy().reshape(-1, 4)`` (target >= 0.8x).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, best_of, main, run_in_baseline  # noqa: E402

BUCKET = "bench-parquet"
FEATURES = 24


def _write(url: str, rows: int) -> None:
    import numpy as np

    from pfio.integrations.parquet import Field, Schema, write_dataset

    schema = Schema([Field("label", np.int64)] +
                    [Field(f"f{i}", np.float64) for i in range(FEATURES)])
    rng = np.random.default_rng(0)
    chunk = 65_536

    def generate():
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            columns = {f"f{i}": rng.random(n) for i in range(FEATURES)}
            labels = rng.integers(0, 10, n)
            for j in range(n):
                yield {"label": int(labels[j]), **{k: float(v[j]) for k, v in columns.items()}}

    write_dataset(url, schema, generate(), row_group_size=chunk, rows_per_file=rows // 8,
                  compression="none")


COLUMNS = ["label"] + [f"f{i}" for i in range(8)]
PASSES = 5

PETASTORM = """
import json, os, time, warnings
warnings.simplefilter("ignore")  # pyarrow 10's legacy-dataset warnings, one per call
from petastorm import make_batch_reader

columns = COLUMNS
options = {"key": "bench", "secret": "bench",
           "client_kwargs": {"endpoint_url": ENDPOINT, "region_name": "us-east-1"}}
best = 0.0
for _ in range(PASSES):
    start = time.perf_counter()
    rows = 0
    with make_batch_reader(URL, schema_fields=[f"^{c}$" for c in columns], num_epochs=1,
                           reader_pool_type="thread", workers_count=4,
                           shuffle_row_groups=False, storage_options=options) as reader:
        for batch in reader:
            rows += len(batch.label)
    best = max(best, rows / (time.perf_counter() - start))
print(json.dumps({"rows": rows, "rate": best}))
"""


def run(quick: bool) -> list[Row]:
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    import pfio
    from pfio.integrations.parquet import BatchReader
    from pfio.testing.s3server import MotoServer

    rows = 200_000 if quick else 1_000_000  # 25 numeric columns: 200 B a row
    with MotoServer(separate_process=True) as server:
        env = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
               "AWS_DEFAULT_REGION": "us-east-1", "S3_ENDPOINT": server.endpoint}
        os.environ.update(env)
        pfio.from_url(f"s3://{BUCKET}", create_bucket=True).close()
        url = f"s3://{BUCKET}/table"
        _write(url, rows)
        with pfio.from_url(url) as fs:
            size = sum(st.size for st in fs.list(detail=True))

        def ours() -> None:
            got = sum(len(b["label"]) for b in BatchReader(url, batch_size=65_536,
                                                           columns=COLUMNS))
            assert got == rows

        s3 = pafs.S3FileSystem(endpoint_override=server.endpoint, scheme="http",
                               access_key="bench", secret_key="bench", region="us-east-1")

        def arrow() -> None:
            table = pq.ParquetDataset(f"{BUCKET}/table", filesystem=s3).read(columns=COLUMNS)
            assert table.num_rows == rows

        ours_time = arrow_time = float("inf")
        for _ in range(PASSES):  # interleaved: a busy moment of the server hurts both alike
            ours_time = min(ours_time, best_of(ours, 1))
            arrow_time = min(arrow_time, best_of(arrow, 1))
        ours_rate, arrow_rate = rows / ours_time, rows / arrow_time
        petastorm = run_in_baseline("petastorm", PETASTORM
                                    .replace("COLUMNS", repr(COLUMNS))
                                    .replace("PASSES", str(PASSES))
                                    .replace("ENDPOINT", repr(server.endpoint))
                                    .replace("URL", repr(url)))
    assert petastorm["rows"] == rows
    metric = f"rows/s, batch reader, {size / 2**20:.0f} MiB dataset on S3, 9 of 25 columns"
    return [Row("parquet", metric, ours_rate, "petastorm make_batch_reader (4 threads)",
                petastorm["rate"], 1.0, unit="rows/s"),
            Row("parquet", metric, ours_rate, "pyarrow.parquet (pyarrow.fs.S3FileSystem)",
                arrow_rate, 0.9, unit="rows/s"),
            *run_arrays(quick)]


ARRAY_BATCH = 4096
ARRAY_PASSES = 15  # a pass takes tens of milliseconds: more of them, for a stable best


def run_arrays(quick: bool) -> list[Row]:
    """Batches/s decoding a (4,) float32 ndarray column, pfio vs pyarrow, local files."""
    import numpy as np
    import pyarrow.parquet as pq

    from pfio.integrations.parquet import BatchReader, Field, Schema, write_dataset

    rows = 200_000 if quick else 1_000_000
    schema = Schema([Field("label", np.int64), Field("vec", np.float32, (4,), "ndarray")])
    vectors = np.random.default_rng(0).random((rows, 4), np.float32)
    with tempfile.TemporaryDirectory() as url:
        files = write_dataset(url, schema, ({"label": i, "vec": vectors[i]} for i in range(rows)),
                              row_group_size=65_536, rows_per_file=rows // 4,
                              compression="none")

        def ours() -> None:
            got = sum(len(b["vec"]) for b in BatchReader(url, batch_size=ARRAY_BATCH,
                                                         columns=["vec"]))
            assert got == rows

        def arrow() -> None:
            got = 0
            for name in files:
                table = pq.read_table(name, columns=["vec"])
                for start in range(0, table.num_rows, ARRAY_BATCH):
                    column = table.slice(start, ARRAY_BATCH).column("vec")
                    got += len(column.combine_chunks().flatten().to_numpy().reshape(-1, 4))
            assert got == rows

        ours_times, arrow_times = [], []
        for _ in range(ARRAY_PASSES):  # interleaved, as above
            ours_times.append(best_of(ours, 1))
            arrow_times.append(best_of(arrow, 1))
    batches = -(-rows // ARRAY_BATCH)
    for name, times in (("pfio", ours_times), ("pyarrow", arrow_times)):
        rates = sorted(batches / t for t in times)
        print(f"{name}: batches/s min {rates[0]:,.0f} median {statistics.median(rates):,.0f} "
              f"max {rates[-1]:,.0f} over {ARRAY_PASSES} passes")
    metric = f"batches/s of {ARRAY_BATCH} rows, (4,) float32 ndarray column, local files"
    return [Row("parquet", metric, batches / min(ours_times),
                "pyarrow read_table + flatten().to_numpy()", batches / min(arrow_times), 0.8,
                unit="batches/s")]


if __name__ == "__main__":
    main(run_arrays if "--arrays" in sys.argv else run)
