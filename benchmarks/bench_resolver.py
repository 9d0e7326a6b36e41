"""``open_url`` of zip members on S3 against reading them through one open ``Zip`` (issue 18).

What patched ``open``, ``PIL.Image.open``, ``numpy.load`` and ``torch.load`` call is
``pfio.open_url("s3://bucket/train.zip/m/00001.bin")``. The resolver opens the zip once per
process and shares it, so each call should cost about what ``archive.open(name)`` costs on an
archive the caller keeps open: target <= 1.2x the time, <= 1 request and <= member + 64 KiB
transferred per call (counted by a proxy in front of the server). The two sides are timed
call by call, alternating, best of 3 passes: the server's (and a shared machine's) busy
moments then fall on both.

Two archives of stored 64 KiB members read at random: one of 2,048 members, and one of
100,000 members (a central directory of about 6 MB: fillers of 256 bytes around 2,000
64 KiB members, the ones read). Runs on a moto server in its own process, and on Ceph's RADOS
Gateway too when ``scripts/ceph-rgw.sh start`` runs one.
"""

from __future__ import annotations

import os
import random
import sys
import time
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, ceph_endpoint, main  # noqa: E402

import pfio  # noqa: E402
from pfio.fs import resolver  # noqa: E402
from pfio.fs.s3 import S3  # noqa: E402
from pfio.testing.faultproxy import FaultProxy  # noqa: E402
from pfio.testing.s3server import MotoServer  # noqa: E402

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
               "AWS_DEFAULT_REGION": "us-east-1"}
MEMBER = 64 << 10
FILLER = 256
BUCKET = "resolver-bench"


def _write_zip(fs: S3, key: str, members: int, fillers: int) -> list[str]:
    """A stored zip of ``members`` 64 KiB members (returned, the ones read) and ``fillers``
    members of 256 bytes between them."""
    names = [f"m/{i:06d}.bin" for i in range(members)]
    every = fillers // members if members else 0
    data = os.urandom(MEMBER)
    filler = os.urandom(FILLER)
    with fs.open(key, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        for i, name in enumerate(names):
            z.writestr(name, data[i % 997:] + data[:i % 997])
            for j in range(every):
                z.writestr(f"f/{i:06d}-{j:03d}.pad", filler)
    return names


def _compare(endpoint: str, key: str, names: list[str], reads: int, label: str) -> list[Row]:
    os.environ["S3_ENDPOINT"] = endpoint
    url = f"s3://{BUCKET}/{key}"
    order = random.Random(0).choices(names, k=reads)

    archive = S3(BUCKET).open_zip(key)

    def by_url(name: str) -> None:
        with pfio.open_url(f"{url}/{name}", "rb") as f:
            f.read()

    def by_zip(name: str) -> None:
        with archive.open(name, "rb") as f:
            f.read()

    resolver.clear_shared_archives()
    by_url(names[0])  # the first call opens the archive
    best = {by_url: float("inf"), by_zip: float("inf")}
    for _ in range(3):
        # call by call, alternating which side goes first, so that a busy moment of the
        # server (or of the machine) hurts both sides alike
        spent = {by_url: 0.0, by_zip: 0.0}
        for i, name in enumerate(order):
            for read in (by_url, by_zip) if i % 2 else (by_zip, by_url):
                start = time.perf_counter()
                read(name)
                spent[read] += time.perf_counter() - start
        best = {read: min(best[read], spent[read]) for read in best}
    archive.close()

    counted = order[:50]
    host = urlsplit(endpoint)
    with FaultProxy(host.hostname, host.port) as proxy:
        os.environ["S3_ENDPOINT"] = proxy.endpoint  # another endpoint: another shared archive
        pfio.open_url(f"{url}/{names[0]}", "rb").close()
        proxy.reset()
        for name in counted:
            with pfio.open_url(f"{url}/{name}", "rb") as f:
                f.read()
        requests, transferred = proxy.requests / len(counted), proxy.bytes_down / len(counted)
    os.environ["S3_ENDPOINT"] = endpoint
    metric = f"open_url of random 64 KiB members, {label}"
    return [
        Row("resolver", f"{metric}: seconds per {reads:,} calls", best[by_url],
            "one open Zip", best[by_zip], 1.2, higher_is_better=False, unit="s"),
        Row("resolver", f"{metric}: requests per call", requests, "one request", 1.0, 1.0,
            higher_is_better=False),
        Row("resolver", f"{metric}: bytes per call", transferred / 1024, "member + 64 KiB",
            (MEMBER + (64 << 10)) / 1024, 1.0, higher_is_better=False, unit="KiB"),
    ]


def _zips(endpoint: str, quick: bool, server: str) -> list[Row]:
    fs = S3(BUCKET, endpoint=endpoint, create_bucket=True)
    reads = 200 if quick else 1000
    small = _write_zip(fs, "train.zip", 2048, 0)
    rows = _compare(endpoint, "train.zip", small, reads, f"zip of 2,048{server}")
    total = 10_000 if quick else 100_000
    read_ones = 2000 if not quick else 500
    large = _write_zip(fs, "large.zip", read_ones, total - read_ones)
    rows += _compare(endpoint, "large.zip", large, reads, f"zip of {total:,}{server}")
    return rows


def run(quick: bool) -> list[Row]:
    """The comparison on a moto server, and on Ceph's RADOS Gateway when one runs."""
    saved = {k: os.environ.get(k) for k in [*CREDENTIALS, "S3_ENDPOINT"]}
    os.environ.update(CREDENTIALS)
    try:
        with MotoServer(separate_process=True) as server:
            rows = _zips(server.endpoint, quick, "")
        ceph = ceph_endpoint()
        if ceph is not None:
            endpoint, credentials = ceph
            os.environ.update(credentials)
            rows += _zips(endpoint, quick, " (Ceph RGW)")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        resolver.clear_shared_archives()
    return rows


if __name__ == "__main__":
    main(run)
