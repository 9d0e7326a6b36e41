"""``pfio.sync`` of many small files (issue 28) against an ``aws s3 sync``-style baseline.

10,000 files of 4 KiB (1,000 with ``--quick``) in 100 directories, synced local -> S3 and
S3 -> local, then each sync again (nothing to copy: the two listings and the comparison).
The baseline is what ``aws s3 sync`` does, written with boto3 in its own virtualenv
(``benchmarks/.venvs/boto3``): list the destination (ListObjectsV2 pages, or ``os.walk``
and ``stat``), compare sizes and modification times, and PUT (``put_object``) or GET the
files that differ with a thread pool of the same size as pfio's (32); a downloaded file is
written without ``fsync`` (pfio syncs every file it writes to disk) and given its object's
time. Both sides run the same rounds, taking turns, each keeping its fastest time.

The S3 server is Ceph's RADOS Gateway when one runs (``scripts/ceph-rgw.sh start DIR``;
``PFIO_TEST_CEPH_*`` in the environment, else the file ``PFIO_CEPH_ENV``), else a moto
server in a process of its own. Targets (on Ceph): files/s >= 1.5x the baseline for both
directions; the no-op syncs are for information, and so is every row on moto, whose own
cost per request (a few ms of Python) caps what any client reaches.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, ceph_endpoint, main, run_in_baseline  # noqa: E402

import pfio  # noqa: E402
from pfio.fs.s3 import S3  # noqa: E402
from pfio.testing.s3server import MotoServer  # noqa: E402

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
               "AWS_DEFAULT_REGION": "us-east-1"}
BUCKET = "sync-bench"
SIZE = 4 << 10
WORKERS = 32

#: the baseline: ``aws s3 sync`` as boto3 code; ``times`` of one round, in seconds
_BASELINE = """
import json, os, sys, time
from concurrent.futures import ThreadPoolExecutor
import boto3
from botocore.config import Config

ENDPOINT, BUCKET, WORKERS, SOURCE, PREFIX, TARGET = {args!r}
client = boto3.client("s3", endpoint_url=ENDPOINT,
                      config=Config(max_pool_connections=WORKERS))

def remote(prefix):
    found = {{}}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for obj in page.get("Contents", ()):
            found[obj["Key"][len(prefix):]] = (obj["Size"], obj["LastModified"].timestamp())
    return found

def local(root):
    found = {{}}
    for top, _, names in os.walk(root):
        for name in names:
            path = os.path.join(top, name)
            st = os.stat(path)
            found[os.path.relpath(path, root)] = (st.st_size, st.st_mtime)
    return found

def differ(here, there):
    return [name for name, (size, mtime) in here.items() if name not in there
            or there[name][0] != size or int(there[name][1]) < int(mtime)]

def upload(root, prefix):
    todo = differ(local(root), remote(prefix))
    def put(name):
        with open(os.path.join(root, name), "rb") as f:
            client.put_object(Bucket=BUCKET, Key=prefix + name, Body=f)
    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(put, todo))
    return len(todo)

def download(prefix, root):
    there = remote(prefix)
    todo = differ(there, local(root))
    def get(name):
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        body = client.get_object(Bucket=BUCKET, Key=prefix + name)["Body"].read()
        with open(path, "wb") as f:
            f.write(body)
        os.utime(path, (time.time(), there[name][1]))
    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(get, todo))
    return len(todo)

times = {{}}
for label, fn, args in (("upload", upload, (SOURCE, PREFIX)),
                        ("upload again", upload, (SOURCE, PREFIX)),
                        ("download", download, (PREFIX, TARGET)),
                        ("download again", download, (PREFIX, TARGET))):
    start = time.perf_counter()
    moved = fn(*args)
    times[label] = (time.perf_counter() - start, moved)
print(json.dumps(times))
"""


def _make_source(root: Path, count: int) -> None:
    """``count`` files of :data:`SIZE` random bytes in 100 directories, an hour old."""
    past = time.time() - 3600
    for i in range(count):
        path = root / f"d{i % 100:03d}" / f"f{i:05d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(SIZE))
        os.utime(path, (past, past))


def _pfio_round(source: Path, prefix: str, target: Path) -> dict[str, tuple[float, int]]:
    """pfio's four syncs (seconds, files copied), as the baseline's."""
    url = f"s3://{BUCKET}/{prefix}"
    times = {}
    for label, src, dst in (("upload", str(source), url), ("upload again", str(source), url),
                            ("download", url, str(target)),
                            ("download again", url, str(target))):
        start = time.perf_counter()
        result = pfio.sync(src, dst, progress=False)
        times[label] = (time.perf_counter() - start, len(result.copied))
    return times


def _measure(endpoint: str, credentials: dict[str, str], quick: bool,
             server: str, target: float | None) -> list[Row]:
    count, rounds = (1000, 1) if quick else (10_000, 2)
    os.environ.update(credentials)
    os.environ["S3_ENDPOINT"] = endpoint
    S3(BUCKET, endpoint=endpoint, create_bucket=True).close()
    work = Path(tempfile.mkdtemp(prefix="pfio-bench-sync-"))
    best: dict[str, dict[str, float]] = {"pfio": {}, "boto3": {}}
    try:
        _make_source(work / "src", count)
        for n in range(rounds):
            for client in ("pfio", "boto3"):
                prefix, local = f"{client}-{n}-{time.time_ns()}/", work / f"{client}-{n}"
                if client == "pfio":
                    times = _pfio_round(work / "src", prefix, local)
                else:
                    args = (endpoint, BUCKET, WORKERS, str(work / "src"), prefix, str(local))
                    times = run_in_baseline("boto3", _BASELINE.format(args=args),
                                            env=credentials)
                for label, (seconds, moved) in times.items():
                    expected = 0 if label.endswith("again") else count
                    assert moved == expected, f"{client} {label}: {moved} files moved"
                    best[client][label] = min(best[client].get(label, float("inf")), seconds)
                shutil.rmtree(local)
    finally:
        shutil.rmtree(work)
        os.environ.pop("S3_ENDPOINT", None)
    rows = []
    for label in ("upload", "download", "upload again", "download again"):
        direction = "local -> S3" if label.startswith("upload") else "S3 -> local"
        again = label.endswith("again")
        metric = (f"sync {direction} again (nothing to copy), {count:,} files{server}" if again
                  else f"sync {direction}, {count:,} files of 4 KiB{server}")
        rows.append(Row("sync", metric, count / best["pfio"][label],
                        f"boto3, {WORKERS} threads (aws s3 sync-style)",
                        count / best["boto3"][label], None if again else target,
                        unit="files/s"))
    return rows


def run(quick: bool) -> list[Row]:
    """The syncs on Ceph RGW when one runs, else on a moto server of its own."""
    ceph = ceph_endpoint()
    if ceph is not None:
        endpoint, credentials = ceph
        return _measure(endpoint, credentials, quick, " (Ceph RGW)", 1.5)
    with MotoServer(separate_process=True) as server:
        return _measure(server.endpoint, CREDENTIALS, quick, " (moto)", None)


if __name__ == "__main__":
    main(run)
