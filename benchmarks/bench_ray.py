"""Ray Data reading Parquet from S3 through pfio (issue 26).

One dataset on S3 (a Ceph RADOS Gateway when ``scripts/ceph-rgw.sh start`` runs one, see
``harness.ceph_endpoint``; else a moto server in a process of its own): 8 files of an int64
label and 24 float64 columns, row groups of 65,536 rows, uncompressed (about 60 MiB a file;
30 MiB in ``--quick``). ``ray.data.read_parquet`` on a local Ray cluster
(``ray.init(num_cpus=2)``) reads it, consuming every batch, through

* ``pfio.integrations.ray.filesystem()``, against
* Ray's own reader, ``pyarrow.fs.S3FileSystem(endpoint_override=...)`` on the same server
  (target >= 0.8x),

for all 25 columns and for 9 of them (column chunks apart: ranged reads). For information,
a row compares it with pfio's fsspec bridge (``PyFileSystem(FSSpecHandler(PfioFileSystem()))``,
what Ray wraps ``fsspec.filesystem("pfio")`` in), which reads through pfio's buffered S3
reader one call at a time. Rows/s, the best of the rounds, all readers interleaved (a busy
moment of the machine hurts them alike); each pass makes a new Dataset, so Ray lists the
files and reads the footers again.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, main, s3_server  # noqa: E402

FILES = 8
FEATURES = 24
ROW_GROUP = 65_536
ROUNDS = 5
SOME = ["label"] + [f"f{i}" for i in range(8)]


def _write(url: str, rows_per_file: int) -> int:
    """The dataset: FILES files under ``url``; returns its size in bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import pfio

    rng = np.random.default_rng(0)
    size = 0
    for index in range(FILES):
        columns = {"label": rng.integers(0, 10, rows_per_file)}
        columns.update({f"f{i}": rng.random(rows_per_file) for i in range(FEATURES)})
        with pfio.open_url(f"{url}/part-{index:05d}.parquet", "wb") as f:
            pq.write_table(pa.table(columns), f, row_group_size=ROW_GROUP,
                           compression="none")
            size += f.tell()
    return size


def _pass(path: str, filesystem: object, columns: list[str] | None) -> Callable[[], int]:
    """One read of the dataset by Ray: the rows it yields."""
    import ray.data

    def read() -> int:
        ds = ray.data.read_parquet(path, filesystem=filesystem)
        if columns is not None:
            ds = ds.select_columns(columns)
        return sum(batch.num_rows for batch in ds.iter_batches(batch_size=None,
                                                                batch_format="pyarrow"))
    return read


def _best_rate(read: Callable[[], int], rows: int) -> float:
    start = time.perf_counter()
    got = read()
    assert got == rows, (got, rows)
    return rows / (time.perf_counter() - start)


def run(quick: bool) -> list[Row]:
    import pyarrow.fs as pafs
    import ray

    from pfio.integrations.fsspec import PfioFileSystem
    from pfio.integrations.ray import filesystem

    rows_per_file = 2 * ROW_GROUP if quick else 4 * ROW_GROUP
    rows = FILES * rows_per_file
    found: list[Row] = []
    with s3_server("bench-ray") as (server, bucket, settings):
        size = _write(f"s3://{bucket}/table", rows_per_file)
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
                 runtime_env={"env_vars": settings})
        ray.data.DataContext.get_current().enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)  # no line per Dataset
        try:
            native = pafs.S3FileSystem(
                endpoint_override=settings["S3_ENDPOINT"], region="us-east-1",
                scheme=urlsplit(settings["S3_ENDPOINT"]).scheme,
                access_key=settings["AWS_ACCESS_KEY_ID"],
                secret_key=settings["AWS_SECRET_ACCESS_KEY"])
            ours = filesystem()
            bridge = pafs.PyFileSystem(pafs.FSSpecHandler(PfioFileSystem()))
            for label, columns in (("all 25 columns", None), ("9 of 25 columns", SOME)):
                passes = {"ours": _pass(f"s3://{bucket}/table", ours, columns),
                          "native": _pass(f"{bucket}/table", native, columns),
                          "bridge": _pass(f"pfio://s3/{bucket}/table", bridge, columns)}
                for read in passes.values():  # warm up: Ray's workers, imports, caches
                    read()
                best = dict.fromkeys(passes, 0.0)
                for _ in range(ROUNDS):
                    for name, read in passes.items():
                        best[name] = max(best[name], _best_rate(read, rows))
                metric = (f"rows/s, ray.data.read_parquet, {size / 2**20:.0f} MiB in {FILES} "
                          f"files on {server}, {label}")
                found.append(Row("ray", metric, best["ours"],
                                 "Ray's pyarrow.fs.S3FileSystem", best["native"], 0.8,
                                 unit="rows/s"))
                found.append(Row("ray", metric, best["ours"], "pfio's fsspec bridge (info)",
                                 best["bridge"], None, unit="rows/s"))
        finally:
            ray.shutdown()
    return found


if __name__ == "__main__":
    main(run)
