"""What the patches cost (issue 7).

1. ``open`` + ``read`` + ``close`` of a 4 KiB local file with ``builtins.open`` patched, against
   the same unpatched (target <= 1.05x): local paths must stay as fast as before.
2. ``cv2.imread`` of an ``s3://`` URL (moto server) on an object-cache hit, against
   ``cv2.imread`` of a local copy of the same image (target <= 1.2x).

Both sides are measured in alternating rounds and the best round of each is kept; times are
the CPU time of this process, so load from other processes does not count.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, best_cpu_of, main  # noqa: E402

import pfio  # noqa: E402


def _alternate(a, b, rounds: int) -> tuple[float, float]:
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, best_cpu_of(a, 1))
        best_b = min(best_b, best_cpu_of(b, 1))
    return best_a, best_b


def _open_row(workdir: str, quick: bool) -> Row:
    path = os.path.join(workdir, "local.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(4096))
    calls = 2_000 if quick else 10_000

    def read_all() -> None:
        for _ in range(calls):
            with open(path, "rb") as f:
                f.read()

    def patched() -> None:
        with pfio.patched("builtins"):
            read_all()

    plain, with_patch = _alternate(read_all, patched, 5 if quick else 15)
    return Row("patches", "open+read+close 4 KiB local file, builtins patched (us/file)",
               with_patch / calls * 1e6, "unpatched open", plain / calls * 1e6, 1.05,
               higher_is_better=False, unit="us")


def _imread_row(workdir: str, quick: bool) -> Row:
    import cv2
    import numpy as np

    from pfio.cache.object_cache import ObjectCache, set_default_object_cache
    from pfio.testing.s3server import MotoServer

    image = np.random.default_rng(0).integers(0, 255, (256, 256, 3), dtype=np.uint8)
    local = os.path.join(workdir, "img.png")
    cv2.imwrite(local, image)
    calls = 200 if quick else 1_000
    with MotoServer() as server:
        os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                          AWS_DEFAULT_REGION="us-east-1", S3_ENDPOINT=server.endpoint)
        with pfio.from_url("s3://bench-patches", create_bucket=True) as fs, \
                fs.open("img.png", "wb") as f, open(local, "rb") as src:
            f.write(src.read())
        set_default_object_cache(ObjectCache(os.path.join(workdir, "objects"), validate="ttl"))

        def local_read() -> None:
            for _ in range(calls):
                cv2.imread(local)

        def remote_read() -> None:
            for _ in range(calls):
                cv2.imread("s3://bench-patches/img.png")

        try:
            with pfio.patched("cv2"):
                remote_read()  # the first read fills the cache
                plain, patched = _alternate(local_read, remote_read, 3 if quick else 7)
        finally:
            set_default_object_cache(None)
    return Row("patches", "cv2.imread 256x256 PNG, s3:// on a cache hit (us/call)",
               patched / calls * 1e6, "cv2.imread of a local copy", plain / calls * 1e6, 1.2,
               higher_is_better=False, unit="us")


def run(quick: bool) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="pfio-bench-patches-") as workdir:
        return [_open_row(workdir, quick), _imread_row(workdir, quick)]


if __name__ == "__main__":
    main(run)
