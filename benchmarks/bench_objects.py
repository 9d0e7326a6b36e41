"""PfioObjectDataset.from_prefix through a DataLoader (issue 24): 2 workers against 4.

JPEGs of about 110 KiB under a prefix of a moto server on loopback, each decoded with PIL
and resized (the issue's workload), DataLoader batches of 64:

1. 2 workers against 4 workers, batches fetched ahead (``__getitems__``, the default):
   target >= 0.95x, the latency of each GET hidden inside a worker; measured straight on
   moto and through a proxy adding 20 ms before each request (a distant server);
2. the CPU time of the DataLoader's workers per image, S3 against a local directory of the
   same files (target <= 1.02x);
3. for information: 2 workers without fetching ahead (each object read when the transform
   reads it, as s3torchconnector's map dataset does) against 2 workers with it, and the
   same DataLoader over the local directory.

moto answers slowly and with much CPU per request on the same machine as the loader (and
the proxy relays in Python), so with few cores more workers also win CPU time from the
server: the absolute rates are low and the 2-against-4 ratio is pessimistic.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, main  # noqa: E402

import pfio  # noqa: E402
from pfio.integrations.torch.objects import PfioObjectDataset  # noqa: E402

BUCKET = "bench-objects"
BATCH = 64


def _jpegs(directory: str, count: int) -> None:
    """``count`` JPEGs of about 110 KiB (noisy 352x352 images, quality 90)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(count):
        label = f"class_{i % 10}"
        os.makedirs(os.path.join(directory, label), exist_ok=True)
        pixels = rng.integers(0, 256, (352, 352, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(os.path.join(directory, label, f"{i:05d}.jpg"),
                                     quality=90)


def decode(obj):
    """The issue's per-image work: PIL decode and resize."""
    import numpy as np
    from PIL import Image

    with Image.open(obj) as image:
        return np.asarray(image.convert("RGB").resize((64, 64)))


def _count(batch):
    return len(batch)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _epoch(dataset, workers: int) -> tuple[float, float]:
    """Images per second of one epoch of a DataLoader with ``workers`` workers, and the
    workers' CPU seconds per image."""
    import torch

    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, num_workers=workers,
                                         collate_fn=_count, shuffle=True)
    cpu, start = _children_cpu(), time.perf_counter()
    seen = sum(loader)
    elapsed = time.perf_counter() - start
    del loader  # its workers exit and are reaped: their CPU time is counted
    return seen / elapsed, (_children_cpu() - cpu) / seen


def _best(dataset, workers: int, repeat: int) -> tuple[float, float]:
    """The best rate and the least CPU per image of ``repeat`` epochs."""
    runs = [_epoch(dataset, workers) for _ in range(repeat)]
    return max(rate for rate, _ in runs), min(cpu for _, cpu in runs)


def run(quick: bool) -> list[Row]:
    from pfio.testing.faultproxy import FaultProxy
    from pfio.testing.s3server import MotoServer

    count, repeat = (320, 1) if quick else (1500, 2)
    with tempfile.TemporaryDirectory() as local, MotoServer(separate_process=True) as server:
        _jpegs(local, count)
        credentials = {"aws_access_key_id": "bench", "aws_secret_access_key": "bench",
                       "region": "us-east-1"}
        s3 = pfio.from_url(f"s3://{BUCKET}", create_bucket=True, endpoint=server.endpoint,
                           **credentials)
        for root, _, files in os.walk(local):
            for name in files:
                path = os.path.join(root, name)
                with open(path, "rb") as src, s3.open(os.path.relpath(path, local), "wb") as f:
                    f.write(src.read())
        url = f"s3://{BUCKET}/"

        def dataset(endpoint: str, fetch_ahead: int = 16) -> PfioObjectDataset:
            return PfioObjectDataset.from_prefix(url, transform=decode, endpoint=endpoint,
                                                 fetch_ahead=fetch_ahead, **credentials)

        ahead = dataset(server.endpoint)
        (two, s3_cpu), (four, _) = _best(ahead, 2, repeat), _best(ahead, 4, repeat)
        lazy_two, _ = _best(dataset(server.endpoint, fetch_ahead=0), 2, repeat)
        local_two, local_cpu = _best(PfioObjectDataset.from_prefix(local, transform=decode),
                                     2, repeat)
        host, port = server.endpoint.rsplit("/", 1)[-1].split(":")
        with FaultProxy(host, int(port)) as proxy:
            proxy.latency = 0.02
            far = dataset(proxy.endpoint)
            (far_two, _), (far_four, _) = _best(far, 2, repeat), _best(far, 4, repeat)
    name = "objects from_prefix (moto)"
    return [
        Row(name, "2 workers, fetch-ahead", two, "4 workers", four, 0.95, unit="img/s"),
        Row(name + " +20 ms", "2 workers, fetch-ahead", far_two, "4 workers", far_four, 0.95,
            unit="img/s"),
        Row(name, "worker CPU per image", s3_cpu * 1e3, "local directory", local_cpu * 1e3,
            1.02, higher_is_better=False, unit="ms"),
        Row(name, "2 workers, fetch-ahead", two, "2 workers, no fetch-ahead", lazy_two, None,
            unit="img/s"),
        Row(name, "2 workers, fetch-ahead", two, "2 workers, local directory", local_two,
            None, unit="img/s"),
    ]


if __name__ == "__main__":
    main(run)
