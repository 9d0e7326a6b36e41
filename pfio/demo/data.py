"""A procedurally drawn image-classification dataset: ten kinds of shapes in random colours,
sizes and places over noise. Small, fast to make, and learnable by a small CNN."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np

CLASSES = ("circle", "square", "triangle", "cross", "ring", "hstripes", "vstripes", "diamond",
           "checker", "dot_grid")


def draw(label: int, rng: np.random.Generator, size: int = 32) -> np.ndarray:
    """An HWC uint8 RGB image of class ``label``."""
    image = rng.integers(0, 60, (size, size, 3), dtype=np.uint8)
    color = tuple(int(c) for c in rng.integers(120, 256, 3))
    c = size // 2 + int(rng.integers(-size // 8, size // 8 + 1))
    r = int(rng.integers(size // 5, size // 3))
    name = CLASSES[label]
    if name == "circle":
        cv2.circle(image, (c, c), r, color, -1)
    elif name == "square":
        cv2.rectangle(image, (c - r, c - r), (c + r, c + r), color, -1)
    elif name == "triangle":
        points = np.array([[c, c - r], [c - r, c + r], [c + r, c + r]], np.int32)
        cv2.fillPoly(image, [points], color)
    elif name == "cross":
        cv2.line(image, (c - r, c - r), (c + r, c + r), color, 3)
        cv2.line(image, (c - r, c + r), (c + r, c - r), color, 3)
    elif name == "ring":
        cv2.circle(image, (c, c), r, color, 2)
    elif name == "hstripes":
        image[::4] = color
    elif name == "vstripes":
        image[:, ::4] = color
    elif name == "diamond":
        points = np.array([[c, c - r], [c - r, c], [c, c + r], [c + r, c]], np.int32)
        cv2.fillPoly(image, [points], color)
    elif name == "checker":
        tile = (np.indices((size, size)).sum(axis=0) // 4) % 2 == 0
        image[tile] = color
    else:
        image[2::6, 2::6] = color
    return image


def write_dataset(directory: str | os.PathLike[str], count: int, seed: int = 0,
                  size: int = 32) -> int:
    """Write ``count`` JPEG images as ``directory/<class>/<n>.jpg``; return the count."""
    rng = np.random.default_rng(seed)
    root = Path(directory)
    for name in CLASSES:
        (root / name).mkdir(parents=True, exist_ok=True)
    for index in range(count):
        label = index % len(CLASSES)
        bgr = cv2.cvtColor(draw(label, rng, size), cv2.COLOR_RGB2BGR)
        cv2.imwrite(str(root / CLASSES[label] / f"{index:06d}.jpg"), bgr,
                    [cv2.IMWRITE_JPEG_QUALITY, 95])
    return count
