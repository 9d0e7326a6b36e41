"""Dask over pfio: a pfio Parquet dataset prepared by Dask partitions on worker processes,
then read by pfio's batch reader and scanned by Dask through ``pfio://``.

An embedded S3 server (moto) on loopback stands in for a bucket; worker processes inherit
its endpoint and credentials from the environment. Needs ``pip install 'pfio[dask,s3]'``.
"""

import os

import dask
import dask.bag as db
import dask.dataframe as dd
import numpy as np
from dask.distributed import Client, LocalCluster

from pfio.integrations.parquet import BatchReader, Field, Schema, write_dataset
from pfio.testing.s3server import MotoServer

SCHEMA = Schema([Field("features", np.float32, (4,), "ndarray"),
                 Field("label", np.int64, (), "scalar")])
URL = "s3://example-bucket/train"


def make_row(k: int) -> dict:
    return {"features": np.full(4, k, np.float32), "label": k % 10}


def write_shard(rows: list, index: int, url: str = URL) -> list:
    """One Dask partition -> its own files of the dataset (``part-00003-00000.parquet``...,
    each atomic), side by side, so ``spark.read.parquet(url)`` reads the dataset too."""
    return write_dataset(url, SCHEMA, rows, row_group_size=16, prefix=f"part-{index:05d}")


def main(url: str = URL, **cluster_options) -> None:
    """Prepare the dataset at ``url`` on a local Dask cluster, then read and scan it.

    ``cluster_options`` go to ``LocalCluster`` (default: two worker processes with one
    thread each; ``threads_per_worker=2`` has two threads of a worker write at once).
    """
    options = {"n_workers": 2, "threads_per_worker": 1, "host": "127.0.0.1",
               "dashboard_address": None, **cluster_options}
    with LocalCluster(**options) as cluster, Client(cluster):
        rows = db.from_sequence(range(100), npartitions=4).map(make_row)
        shards = dask.compute(*[dask.delayed(write_shard)(part, i, url)
                                for i, part in enumerate(rows.to_delayed())])
        print(sum(len(files) for files in shards), "files")  # 4 files

        # training side: decoded arrays, shuffled row groups, no Dask needed
        batch = next(iter(BatchReader(url, batch_size=32, shuffle=True, seed=0)))
        print(batch["features"].shape)  # (32, 4)

        # analysis side: Dask scans the scalar columns through pfio://
        labels = dd.read_parquet("pfio://s3/" + url.removeprefix("s3://"), columns=["label"])
        print(len(labels), int(labels["label"].sum().compute()))  # 100 450


if __name__ == "__main__":  # worker processes re-import this file: start nothing there
    with MotoServer() as server:
        os.environ.update(AWS_ACCESS_KEY_ID="example", AWS_SECRET_ACCESS_KEY="example",
                          AWS_DEFAULT_REGION="us-east-1", S3_ENDPOINT=server.endpoint)
        import pfio

        pfio.from_url("s3://example-bucket", create_bucket=True).close()
        main()
