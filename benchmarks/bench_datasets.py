"""PfioImageDataset through a 4-worker DataLoader (issue 8).

2,000 JPEGs of about 32 KiB in a zip on S3 (moto server on loopback), decoded with PIL:

1. epoch 1 (from S3) against a hand-written Dataset over PFIO 2.10 reading the same zip on the
   same server, in its own virtualenv (target >= 2x). PFIO 2.10 refills a 16 MiB buffer for
   every member it seeks to, so it reads a sample of the members; rates are per image.
2. epoch 2 (from pfio's cache) against the same images read from a local directory by the same
   DataLoader (target >= 0.8x).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, main, run_in_baseline  # noqa: E402

import pfio  # noqa: E402

BUCKET = "bench-datasets"
WORKERS = 4


def _jpegs(directory: str, count: int) -> list[str]:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    names = []
    for i in range(count):
        label = f"class_{i % 10}"
        os.makedirs(os.path.join(directory, label), exist_ok=True)
        noise = rng.integers(0, 256, (192, 192, 3), dtype=np.uint8)
        smooth = np.repeat(np.repeat(noise[::2, ::2], 2, axis=0), 2, axis=1)
        name = f"{label}/{i:05d}.jpg"
        Image.fromarray((noise // 4 + smooth // 4 * 3).astype(np.uint8)).save(
            os.path.join(directory, name), quality=90)
        names.append(name)
    return names


def _epoch(dataset, seconds_budget: float | None = None) -> float:
    """Images per second of one epoch of a 4-worker DataLoader over ``dataset``."""
    import torch

    loader = torch.utils.data.DataLoader(dataset, batch_size=32, shuffle=True,
                                         num_workers=WORKERS, collate_fn=lambda batch: len(batch))
    start = time.perf_counter()
    seen = sum(loader)
    return seen / (time.perf_counter() - start)


def _to_array(image):
    import numpy as np

    return np.asarray(image)


BASELINE = """
import io, json, random, time
import numpy as np
import torch
from PIL import Image
from pfio.v2 import from_url


class ZipImages(torch.utils.data.Dataset):
    '''What a PFIO 2.10 user writes: the zip opened lazily in each worker.'''

    def __init__(self, url, names):
        self.url, self.names, self.zip = url, names, None

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        if self.zip is None:
            self.zip = from_url(self.url)
        with self.zip.open(self.names[i], "rb") as f:
            image = Image.open(io.BytesIO(f.read())).convert("RGB")
        return np.asarray(image), 0


names = random.Random(0).sample(NAMES, SAMPLE)
loader = torch.utils.data.DataLoader(ZipImages(URL, names), batch_size=32, shuffle=True,
                                     num_workers=4, collate_fn=lambda batch: len(batch))
start = time.perf_counter()
seen = sum(loader)
print(json.dumps({"rate": seen / (time.perf_counter() - start)}))
"""


def run(quick: bool) -> list[Row]:
    from pfio.integrations.torch import PfioImageDataset
    from pfio.testing.s3server import MotoServer

    count, sample = (400, 40) if quick else (2000, 120)
    with tempfile.TemporaryDirectory(prefix="pfio-bench-datasets-") as workdir, \
            MotoServer() as server:
        env = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
               "AWS_DEFAULT_REGION": "us-east-1", "S3_ENDPOINT": server.endpoint}
        os.environ.update(env)
        local = os.path.join(workdir, "images")
        names = _jpegs(local, count)
        size = sum(os.path.getsize(os.path.join(local, n)) for n in names) / count
        with pfio.from_url(f"s3://{BUCKET}", create_bucket=True) as s3:
            with s3.open_zip("train.zip", "w", compression="stored") as archive:
                for name in names:
                    with open(os.path.join(local, name), "rb") as src, \
                            archive.open(name, "wb") as dst:
                        dst.write(src.read())
        url = f"s3://{BUCKET}/train.zip"
        cached = PfioImageDataset(url, decoder="pil", transform=_to_array, cache="raw",
                                  cache_dir=os.path.join(workdir, "cache"))
        epoch1 = _epoch(cached)
        epoch2 = _epoch(cached)
        from_local = _epoch(PfioImageDataset(local, decoder="pil", transform=_to_array))
        baseline = run_in_baseline(
            "pfio210-torch",
            BASELINE.replace("NAMES", repr(names)).replace("SAMPLE", str(sample))
            .replace("URL", repr(url)), env=env)
    unit = "images/s"
    note = f"{count:,} JPEGs of {size / 1024:.0f} KiB in a zip on S3"
    return [
        Row("datasets", f"epoch 1 from S3, {note}", epoch1,
            f"PFIO 2.10 hand-written Dataset ({sample} images)", baseline["rate"], 2.0,
            unit=unit),
        Row("datasets", f"epoch 2 from the cache, {note}", epoch2,
            "same images from a local directory", from_local, 0.8, unit=unit),
    ]


if __name__ == "__main__":
    main(run)
