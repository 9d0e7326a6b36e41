"""One epoch of a DataLoader, timed the same way for pfio and for every baseline.

This file imports neither pfio nor any reader: the baselines' virtualenvs import it too (their
scripts put this folder on ``sys.path``). Every row of ``bench_training_input`` builds its
dataset, hands it to :func:`run_epoch` and prints the JSON it returns.

The work per image is the same everywhere: PIL decodes the JPEG, resizes it to 224 x 224 and
turns it into a CHW uint8 array; the default collate function makes batches of tensors.
"""

from __future__ import annotations

import io
import json
import os
import resource
import time
from typing import Any

BATCH = 64
SIDE = 224


def to_chw(image: Any) -> Any:
    """A PIL image resized to 224 x 224, as a CHW uint8 array."""
    import numpy as np

    rgb = image.convert("RGB").resize((SIDE, SIDE))
    return np.ascontiguousarray(np.asarray(rgb).transpose(2, 0, 1))


def decode(data: bytes) -> Any:
    """JPEG bytes -> a CHW uint8 array (PIL decode and resize)."""
    from PIL import Image

    return to_chw(Image.open(io.BytesIO(data)))


def label_of(key: str) -> int:
    """The label of ``.../class_7/00042.jpg``: 7."""
    return int(key.rsplit("/", 2)[-2].rsplit("_", 1)[-1])


class FolderDataset:
    """ImageFolder-style code written for local disk: ``os.walk`` lists, ``open`` reads.

    Under ``pfio.patch_all()`` the same code reads a URL (an S3 prefix) unchanged.
    ``io_only`` returns the byte count instead of decoding.
    """

    def __init__(self, root: str, io_only: bool = False) -> None:
        self.io_only = io_only
        self.items: list[tuple[str, int]] = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".jpg"):
                    path = dirpath.rstrip("/") + "/" + name
                    self.items.append((path, label_of(path)))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        path, label = self.items[index]
        with open(path, "rb") as f:
            data = f.read()
        return (len(data) if self.io_only else decode(data)), label


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_epoch(dataset: Any, workers: int = 2, shuffle: bool | None = None) -> dict[str, float]:
    """Images per second and client CPU seconds per image of one epoch over ``dataset``
    (``batch_size=64``, ``workers`` DataLoader workers; map-style datasets are shuffled).

    CPU counts this process and its finished children (the DataLoader workers, joined at
    the end of the epoch), so run one epoch per process for a clean figure, or take the
    difference of two.
    """
    import torch.utils.data

    if shuffle is None:
        shuffle = not isinstance(dataset, torch.utils.data.IterableDataset)
    generator = torch.Generator().manual_seed(0)
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, num_workers=workers,
                                         shuffle=shuffle, generator=generator if shuffle else None)
    cpu0, start = _cpu_seconds(), time.perf_counter()
    images = 0
    for _, labels in loader:
        images += len(labels)
    seconds = time.perf_counter() - start
    del loader
    cpu = _cpu_seconds() - cpu0
    return {"images": images, "seconds": seconds, "rate": images / seconds,
            "cpu_ms": 1000 * cpu / max(images, 1)}


def report(result: dict[str, Any]) -> None:
    """Print ``result`` as the JSON line the benchmark reads."""
    print(json.dumps(result), flush=True)
