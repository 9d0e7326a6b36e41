"""What the patches cost (issues 7 and 20).

1. ``open`` + ``read`` + ``close`` of a 4 KiB local file with ``builtins.open`` patched, against
   the same unpatched (target <= 1.05x): local paths must stay as fast as before.
2. ``cv2.imread`` of an ``s3://`` URL (moto server) on an object-cache hit, against
   ``cv2.imread`` of a local copy of the same image (target <= 1.2x).
3. An ImageFolder-style dataset written for local disk (tests/patches/image_folder.py:
   ``os.scandir``, ``os.walk``, ``PIL.Image.open``) read on ``s3://`` with
   ``patch_all(cache=True)``: its second epoch, from the object cache, against the same
   images in a local directory (images/s, target >= 0.8x).
4. ``h5py.File`` on ``s3://``: 100 random rows of 64 KiB of a 50 MiB dataset; the bytes the
   GETs moved against twice the bytes of the rows plus 1 MiB of metadata (target <= 1x: no
   spool of the whole file).
5. ``open(url, "wb")`` of 32 MiB through the patch (a local spool uploaded on close, so that
   the file has a descriptor) against ``pfio.open_url(url, "wb")`` streaming the same bytes
   (wall time, best of alternating rounds; for information: what the spool costs).

The timed rows measure both sides in alternating rounds and keep the best round of each;
times are the CPU time of this process, so load from other processes does not count.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# the dataset class of the patch tests, written for local disk
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "patches"))

from harness import Row, best_cpu_of, best_of, main  # noqa: E402

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


@contextlib.contextmanager
def _s3(workdir: str) -> Iterator[str]:
    """A moto server (its settings in the environment) with a bucket, and a private default
    object cache under ``workdir``: yields the bucket's URL."""
    from pfio.cache.object_cache import ObjectCache, set_default_object_cache
    from pfio.testing.s3server import MotoServer

    with MotoServer() as server:
        os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                          AWS_DEFAULT_REGION="us-east-1", S3_ENDPOINT=server.endpoint)
        with pfio.from_url("s3://bench-patches", create_bucket=True):
            pass
        set_default_object_cache(ObjectCache(os.path.join(workdir, "objects"), validate="ttl"))
        try:
            yield "s3://bench-patches"
        finally:
            set_default_object_cache(None)


def _imread_row(workdir: str, bucket: str, quick: bool) -> Row:
    import cv2
    import numpy as np

    image = np.random.default_rng(0).integers(0, 255, (256, 256, 3), dtype=np.uint8)
    local = os.path.join(workdir, "img.png")
    cv2.imwrite(local, image)
    calls = 200 if quick else 1_000
    with pfio.from_url(bucket) as fs, fs.open("img.png", "wb") as f, open(local, "rb") as src:
        f.write(src.read())

    def local_read() -> None:
        for _ in range(calls):
            cv2.imread(local)

    def remote_read() -> None:
        for _ in range(calls):
            cv2.imread(f"{bucket}/img.png")

    with pfio.patched("cv2"):
        remote_read()  # the first read fills the cache
        plain, patched = _alternate(local_read, remote_read, 3 if quick else 7)
    return Row("patches", "cv2.imread 256x256 PNG, s3:// on a cache hit (us/call)",
               patched / calls * 1e6, "cv2.imread of a local copy", plain / calls * 1e6, 1.2,
               higher_is_better=False, unit="us")


def _image_folder_row(workdir: str, bucket: str, quick: bool) -> Row:
    import numpy as np
    from image_folder import ImageFolder
    from PIL import Image

    classes, per_class = (4, 32) if quick else (8, 64)
    rng = np.random.default_rng(0)
    local_root = os.path.join(workdir, "train")
    with pfio.from_url(f"{bucket}/train") as fs:
        for c in range(classes):
            os.makedirs(os.path.join(local_root, f"class{c}"))
            for i in range(per_class):
                pixels = rng.integers(0, 255, (224, 224, 3), dtype=np.uint8)
                buffer = io.BytesIO()
                Image.fromarray(pixels).save(buffer, format="JPEG", quality=90)
                name = f"class{c}/{i:04d}.jpg"
                with open(os.path.join(local_root, name), "wb") as f:
                    f.write(buffer.getvalue())
                with fs.open(name, "wb") as f:
                    f.write(buffer.getvalue())
    local = ImageFolder(local_root)
    with pfio.patched(cache=True):
        remote = ImageFolder(f"{bucket}/train")
        assert len(remote) == len(local) == classes * per_class

        def epoch(dataset: ImageFolder) -> None:
            for i in range(len(dataset)):
                dataset[i]

        epoch(remote)  # epoch 1 fills the cache
        plain, patched = _alternate(lambda: epoch(local), lambda: epoch(remote),
                                    3 if quick else 5)
    n = len(local)
    return Row("patches", f"ImageFolder dataset (os.scandir/os.walk/PIL), {n} JPEGs 224x224, "
               "s3:// epoch 2 through the cache (images/s)", n / patched,
               "the same images in a local directory", n / plain, 0.8, unit="images/s")


def _h5py_row(bucket: str, quick: bool) -> Row:
    import h5py
    import numpy as np

    from pfio import trace

    row, rows, reads = 64 << 10, 800, 100  # 50 MiB
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as h5:
        h5.create_dataset("x", data=np.zeros((rows, row), np.uint8), chunks=(1, row))
    with pfio.from_url(bucket) as fs, fs.open("big.h5", "wb") as f:
        f.write(buffer.getvalue())
    picks = np.random.default_rng(0).choice(rows, reads, replace=False)
    with pfio.patched("h5py"):
        trace.enable()
        try:
            with h5py.File(f"{bucket}/big.h5") as f:
                for index in picks:
                    f["x"][index]
            moved = trace.metrics().requests[("s3", "GET")].bytes
        finally:
            trace.disable()
    budget = 2 * reads * row + (1 << 20)
    return Row("patches", f"h5py.File on s3://, {reads} random rows of 64 KiB of a "
               f"{len(buffer.getvalue()) >> 20} MiB dataset (MiB moved by GETs)",
               moved / (1 << 20), "2x the rows read + 1 MiB", budget / (1 << 20), 1.0,
               higher_is_better=False, unit="MiB")


def _spooled_write_row(bucket: str, quick: bool) -> Row:
    data = os.urandom(32 << 20)

    def streamed() -> None:
        with pfio.open_url(f"{bucket}/streamed.bin", "wb") as f:
            f.write(data)

    def spooled() -> None:
        with open(f"{bucket}/spooled.bin", "wb") as f:
            f.write(data)

    with pfio.patched("builtins"):
        plain = patched = float("inf")
        for _ in range(3 if quick else 7):
            plain = min(plain, best_of(streamed, 1))
            patched = min(patched, best_of(spooled, 1))
    return Row("patches", "open(s3 url, 'wb') of 32 MiB through the patch, spooled (s)",
               patched, "pfio.open_url streaming", plain, None, higher_is_better=False,
               unit="s")


def run(quick: bool) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="pfio-bench-patches-") as workdir:
        rows = [_open_row(workdir, quick)]
        with _s3(workdir) as bucket:
            rows += [_imread_row(workdir, bucket, quick),
                     _image_folder_row(workdir, bucket, quick),
                     _h5py_row(bucket, quick),
                     _spooled_write_row(bucket, quick)]
        return rows


if __name__ == "__main__":
    main(run)
