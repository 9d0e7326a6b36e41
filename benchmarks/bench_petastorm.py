"""``make_batch_reader``: pfio's Petastorm face against Petastorm 0.13.1 on S3 (issue 26).

One dataset on S3 (a Ceph RADOS Gateway when ``scripts/ceph-rgw.sh start`` runs one, see
``harness.ceph_endpoint``; else a moto server in a process of its own): an int64 label, 8
float64 features and a 16-float ``list<float>`` column, in row groups of 16,384 rows, written
by pyarrow. Both readers run ``make_batch_reader(url, workers_count=4,
shuffle_row_groups=False)`` and yield one namedtuple of NumPy arrays per row group, the list
column decoded to an ``(N, 16)`` matrix; the figure is decoded batches/s, the best of 3
passes (target >= 3x). Petastorm runs in its own virtualenv (``harness.BASELINES``): it
needs pyarrow 10 and NumPy 1.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, main, run_in_baseline, s3_server  # noqa: E402

GROUP = 16_384
WIDTH = 16
PASSES = 3

PETASTORM = """
import json, os, time, warnings
warnings.simplefilter("ignore")  # pyarrow 10's legacy-dataset warnings, one per call
from petastorm import make_batch_reader

options = {"key": os.environ["AWS_ACCESS_KEY_ID"], "secret": os.environ["AWS_SECRET_ACCESS_KEY"],
           "client_kwargs": {"endpoint_url": os.environ["S3_ENDPOINT"],
                             "region_name": "us-east-1"}}
best, rows = 0.0, 0
for _ in range(PASSES):
    start = time.perf_counter()
    batches = rows = 0
    with make_batch_reader(URL, reader_pool_type="thread", workers_count=4,
                           shuffle_row_groups=False, storage_options=options) as reader:
        for batch in reader:
            assert batch.vec.shape == (len(batch.label), WIDTH)
            batches += 1
            rows += len(batch.label)
    best = max(best, batches / (time.perf_counter() - start))
print(json.dumps({"rows": rows, "rate": best}))
"""


def _write(url: str, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import pfio

    rng = np.random.default_rng(0)
    per_file = rows // 4
    for k in range(4):
        values = rng.random((per_file, WIDTH), np.float32)
        table = pa.table({"label": rng.integers(0, 10, per_file),
                          **{f"f{i}": rng.random(per_file) for i in range(8)},
                          "vec": pa.ListArray.from_arrays(
                              np.arange(0, per_file * WIDTH + 1, WIDTH, dtype=np.int32),
                              values.reshape(-1))})
        with pfio.open_url(f"{url}/part-{k:05d}.parquet", "wb") as f:
            pq.write_table(table, f, row_group_size=GROUP)


def _ours(url: str) -> tuple[int, float]:
    from pfio.integrations.petastorm import make_batch_reader

    best, rows = 0.0, 0
    for _ in range(PASSES):
        start = time.perf_counter()
        batches = rows = 0
        with make_batch_reader(url, reader_pool_type="thread", workers_count=4,
                               shuffle_row_groups=False) as reader:
            for batch in reader:
                assert batch.vec.shape == (len(batch.label), WIDTH)
                batches += 1
                rows += len(batch.label)
        best = max(best, batches / (time.perf_counter() - start))
    return rows, best


def run(quick: bool) -> list[Row]:
    rows = 4 * GROUP * (4 if quick else 16)
    with s3_server("bench-petastorm") as (server, bucket, _):
        url = f"s3://{bucket}/petastorm"
        _write(url, rows)
        ours_rows, ours = _ours(url)
        theirs = run_in_baseline("petastorm", PETASTORM.replace("PASSES", str(PASSES))
                                 .replace("WIDTH", str(WIDTH)).replace("URL", repr(url)))
    assert ours_rows == theirs["rows"] == rows
    metric = (f"decoded batches/s of {GROUP:,} rows (label, 8 floats, {WIDTH}-float list), "
              f"make_batch_reader, 4 threads, {server}")
    return [Row("petastorm", metric, ours, "petastorm 0.13.1 make_batch_reader",
                theirs["rate"], 3.0, unit="batches/s")]


if __name__ == "__main__":
    main(run)
