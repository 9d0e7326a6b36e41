"""What the object cache costs on the first epoch, and saves on the second (issue 24).

An ImageFolder-style dataset written for local disk (tests/patches/image_folder.py:
``os.scandir``, ``os.walk``, ``PIL.Image.open``), N JPEGs of about 110 KiB on S3, read under
``pfio.patch_all()``:

* without the cache (the baseline of epoch 1);
* with ``patch_all(cache=True)`` and the patches' own default object cache
  (``validate="ttl"``, ``sync=False``), epoch 1 (an empty cache: each round reads a fresh
  prefix, so nothing of an earlier round helps) and epoch 2 (from the cache);
* from a local directory (the baseline of epoch 2).

For each: S3 requests per file (counted by the client's request hook, so they are exact on
any server), client CPU per file (``time.process_time``: this process only, the server
runs in another) and files/s (wall time). Targets: epoch 1 sends as many requests as the
uncached loop (one GET per file, no HEAD), costs at most 1.05x its CPU and reaches 0.9x its
files/s; epoch 2 sends none and reads at local-disk speed.

The server is a Ceph RADOS Gateway when one runs (``scripts/ceph-rgw.sh start``; see
``harness.ceph_endpoint``), else a moto server in a process of its own. Rounds alternate the
loops; the best round of each is kept. The cache and the local copy live where a user's
cache does, under ``~/.cache`` (``$PFIO_BENCH_DIR`` overrides it), not in ``/tmp``, which
some machines serve slower (creating a file in ``/tmp`` of one test machine costs 0.6 ms of
CPU against 0.02 ms in ``~/.cache``).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# the dataset class of the patch tests, written for local disk
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "patches"))

from harness import Row, main, s3_server  # noqa: E402

import pfio  # noqa: E402

CLASSES = 4

#: where the benchmark's files go (see the module documentation)
SCRATCH = os.environ.get("PFIO_BENCH_DIR", os.path.join(os.path.expanduser("~"), ".cache"))


@dataclass
class Epoch:
    """One pass over the dataset: per file, requests by method, CPU seconds; files/s."""

    files: int
    requests: Counter
    cpu: float
    wall: float

    def per_file(self, method: str) -> float:
        return self.requests[method] / self.files

    @property
    def cpu_per_file(self) -> float:
        return self.cpu / self.files

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall


def _images(count: int) -> list[bytes]:
    """``count`` JPEGs of 500x375 (a photo's size), about 110 KiB each."""
    import numpy as np
    from PIL import Image, ImageFilter

    rng = np.random.default_rng(0)
    out = []
    for _ in range(count):
        pixels = rng.integers(0, 255, (375, 500, 3), dtype=np.uint8)
        image = Image.fromarray(pixels).filter(ImageFilter.GaussianBlur(1))
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=95)
        out.append(buffer.getvalue())
    return out


def _names(count: int) -> list[str]:
    return [f"class{i % CLASSES}/{i:05d}.jpg" for i in range(count)]


def _upload(url: str, images: list[bytes]) -> None:
    with pfio.from_url(url) as fs:
        def put(item: tuple[str, bytes]) -> None:
            with fs.open(item[0], "wb") as f:
                f.write(item[1])

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(put, zip(_names(len(images)), images, strict=True)))


def _write_local(root: str, images: list[bytes]) -> None:
    for name, data in zip(_names(len(images)), images, strict=True):
        os.makedirs(os.path.join(root, os.path.dirname(name)), exist_ok=True)
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)


def _epoch(root: str, requests: Counter) -> Epoch:
    """One epoch of the ImageFolder dataset at ``root`` (listed before the clock starts)."""
    from image_folder import ImageFolder

    dataset = ImageFolder(root)
    requests.clear()
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(len(dataset)):
        dataset[i]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return Epoch(len(dataset), Counter(requests), cpu, wall)


def _best(epochs: list[Epoch]) -> Epoch:
    """The best round: the least CPU and the least wall time (of any round each), the
    requests of the last."""
    return Epoch(epochs[-1].files, epochs[-1].requests, min(e.cpu for e in epochs),
                 min(e.wall for e in epochs))


def _measure(bucket: str, workdir: str, count: int, rounds: int) -> dict[str, Epoch]:
    from pfio.cache.object_cache import set_default_object_cache

    images = _images(count)
    local = os.path.join(workdir, "local")
    _write_local(local, images)
    prefixes = [f"{bucket}/r{r}" for r in range(rounds)]
    for prefix in prefixes:
        _upload(prefix, images)
    requests: Counter = Counter()
    path = "/" + bucket[len("s3://"):] + "/"
    with pfio.from_url(bucket) as fs:
        fs.connection.add_request_hook(
            lambda method, target, headers: requests.update(
                [method] if target.startswith(path) else []))
    # the patches' own default cache (validate="ttl", sync=False), in the work directory
    os.environ["XDG_CACHE_HOME"] = os.path.join(workdir, "xdg")
    set_default_object_cache(None)
    found: dict[str, list[Epoch]] = {"local": [], "uncached": [], "epoch 1": [],
                                     "epoch 2": []}
    loops: list[tuple[str, Callable[[int], Epoch]]] = [
        ("local", lambda r: _epoch(local, requests)),
        ("uncached", lambda r: _uncached(prefixes[r], requests)),
        ("epoch 1", lambda r: _cached(prefixes[r], requests)),
        ("epoch 2", lambda r: _cached(prefixes[r], requests)),
    ]
    try:
        for r in range(rounds):
            for name, loop in loops:
                found[name].append(loop(r))
    finally:
        set_default_object_cache(None)
    return {name: _best(epochs) for name, epochs in found.items()}


def _uncached(root: str, requests: Counter) -> Epoch:
    with pfio.patched():
        return _epoch(root, requests)


def _cached(root: str, requests: Counter) -> Epoch:
    with pfio.patched(cache=True):
        return _epoch(root, requests)


def _rows(server: str, n: int, m: dict[str, Epoch]) -> list[Row]:
    what = f"ImageFolder (PIL), {n} JPEGs ~110 KiB on {server}"
    e1, e2, uncached, local = m["epoch 1"], m["epoch 2"], m["uncached"], m["local"]
    requests = {name: e.per_file("GET") + e.per_file("HEAD") for name, e in m.items()}
    return [
        Row("cache_epoch1", f"{what}: epoch 1 requests/file ({e1.per_file('GET'):.2f} GET, "
            f"{e1.per_file('HEAD'):.2f} HEAD)", requests["epoch 1"],
            "patch_all() without cache", requests["uncached"], 1.0, higher_is_better=False),
        Row("cache_epoch1", f"{what}: epoch 1 client CPU/file", e1.cpu_per_file * 1e3,
            "patch_all() without cache", uncached.cpu_per_file * 1e3, 1.05,
            higher_is_better=False, unit="ms"),
        Row("cache_epoch1", f"{what}: epoch 1 files/s", e1.files_per_s,
            "patch_all() without cache", uncached.files_per_s, 0.9, unit="files/s"),
        Row("cache_epoch1", f"{what}: epoch 2 requests/file", requests["epoch 2"],
            "patch_all() without cache", requests["uncached"], 0.0, higher_is_better=False),
        Row("cache_epoch1", f"{what}: epoch 2 client CPU/file", e2.cpu_per_file * 1e3,
            "local directory", local.cpu_per_file * 1e3, 1.1, higher_is_better=False,
            unit="ms"),
        Row("cache_epoch1", f"{what}: epoch 2 files/s", e2.files_per_s,
            "local directory", local.files_per_s, 0.8, unit="files/s"),
    ]


def run(quick: bool) -> list[Row]:
    count, rounds = (200, 2) if quick else (1000, 3)
    saved = dict(os.environ)
    try:
        os.makedirs(SCRATCH, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="pfio-bench-epoch1-", dir=SCRATCH) as workdir, \
                s3_server("bench-epoch1") as (server, bucket, _):
            return _rows(server, count, _measure(f"s3://{bucket}", workdir, count, rounds))
    finally:
        os.environ.clear()
        os.environ.update(saved)


if __name__ == "__main__":
    main(run)
