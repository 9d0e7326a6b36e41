"""Dask over ``pfio://s3/...`` on a ``dask.distributed`` LocalCluster of worker processes.

One cluster for the module (two worker processes, one thread each, loopback only, no
dashboard); the workers reach the moto server through the environment they inherit.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("dask.distributed")

import pfio  # noqa: E402
from pfio.integrations.parquet import BatchReader, Field, Schema, write_dataset  # noqa: E402


@pytest.fixture(scope="module")
def client(s3_server):
    """A distributed client whose worker processes see the test server's settings."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in s3_server.credentials.items():
            env.setenv(name, value)
        env.setenv("S3_ENDPOINT", s3_server.endpoint)
        env.delenv("AWS_ENDPOINT_URL", raising=False)
        env.delenv("AWS_PROFILE", raising=False)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            yield client


def _frame(n: int, scale: int) -> pd.DataFrame:
    return pd.DataFrame({"i": np.arange(n) * scale, "s": [f"row{k}" for k in range(n)]})


def test_workers_are_processes_on_loopback(client):
    workers = client.scheduler_info()["workers"]
    assert len(workers) == 2
    assert all(address.startswith("tcp://127.0.0.1:") for address in workers)
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids


def test_to_parquet_then_read_parquet(client, s3_bucket):
    url = f"pfio://s3/{s3_bucket}/table"
    dd.from_pandas(_frame(60, 1), npartitions=3).to_parquet(url)
    back = dd.read_parquet(url).compute()
    assert back.sort_values("i")["i"].tolist() == list(range(60))
    with pfio.from_url(f"s3://{s3_bucket}/table") as fs:
        assert sorted(n for n in fs.list() if n.endswith(".parquet")) == [
            "part.0.parquet", "part.1.parquet", "part.2.parquet"]


def test_to_parquet_overwrite_replaces_an_existing_dataset(client, s3_bucket):
    url = f"pfio://s3/{s3_bucket}/table"
    dd.from_pandas(_frame(40, 1), npartitions=4).to_parquet(url)
    dd.from_pandas(_frame(40, 2), npartitions=2).to_parquet(url, overwrite=True)
    back = dd.read_parquet(url).compute()
    assert sorted(back["i"]) == [2 * k for k in range(40)]
    with pfio.from_url(f"s3://{s3_bucket}/table") as fs:
        assert sorted(n for n in fs.list() if n.endswith(".parquet")) == [
            "part.0.parquet", "part.1.parquet"]


def test_read_text_of_gzipped_jsonl_by_glob(client, s3_bucket):
    with pfio.from_url(f"s3://{s3_bucket}/logs") as fs:
        for part in range(3):
            with fs.open(f"day{part}.jsonl.gz", "w", compression="infer") as f:
                f.writelines(json.dumps({"v": part * 10 + k}) + "\n" for k in range(10))
        with fs.open("notes.txt", "w") as f:
            f.write("not matched by the glob\n")
    bag = db.read_text(f"pfio://s3/{s3_bucket}/logs/*.jsonl.gz")
    assert bag.npartitions == 3
    assert sorted(bag.map(json.loads).pluck("v").compute()) == list(range(30))


def test_pfio_parquet_dataset_written_by_dask_partitions(client, s3_bucket):
    schema = Schema([Field("x", np.float32, (2, 3), "ndarray"),
                     Field("label", np.int64, (), "scalar")])
    url = f"s3://{s3_bucket}/train"

    def write_shard(rows: list[dict], index: int) -> list[str]:
        return write_dataset(url, schema, rows, row_group_size=4, prefix=f"part-{index:05d}")

    rows = db.from_sequence(range(24), npartitions=3).map(
        lambda k: {"x": np.full((2, 3), k, np.float32), "label": k})
    written = dask.compute(*[dask.delayed(write_shard)(part, i)
                             for i, part in enumerate(rows.to_delayed())])
    assert [len(files) for files in written] == [1, 1, 1]
    with pfio.from_url(url) as fs:  # flat, as spark.read.parquet(url) wants it
        assert sorted(fs.list()) == [f"part-{i:05d}-00000.parquet" for i in range(3)]
    labels, firsts = [], []
    for batch in BatchReader(url, batch_size=8):
        labels.extend(batch["label"].tolist())
        firsts.extend(batch["x"][:, 0, 0].tolist())
    assert sorted(labels) == list(range(24)) and sorted(firsts) == list(range(24))
    scanned = dd.read_parquet(f"pfio://{url.replace('://', '/')}", columns=["label"])
    assert int(scanned["label"].sum().compute()) == sum(range(24))
