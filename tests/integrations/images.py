"""Small generated image datasets for the integration tests."""

from __future__ import annotations

import cv2
import numpy as np

from pfio.fs.base import FS


def color(label: int, index: int) -> tuple[int, int, int]:
    """The RGB colour of image ``index`` of class ``label``: tells images apart after decoding."""
    return (label * 40 % 256, index * 7 % 256, 200)


def write_image_tree(fs: FS, classes: int = 3, per_class: int = 4, size: int = 8,
                     ext: str = ".png") -> list[tuple[str, int]]:
    """Write ``class_k/img_i.png`` files of solid colours; return (path, label) pairs."""
    items = []
    for label in range(classes):
        if fs.scheme == "file":
            fs.makedirs(f"class_{label}", exist_ok=True)
        for index in range(per_class):
            rgb = np.full((size, size, 3), color(label, index), np.uint8)
            ok, encoded = cv2.imencode(ext, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
            assert ok
            path = f"class_{label}/img_{index:03d}{ext}"
            with fs.open(path, "wb") as f:
                f.write(encoded.tobytes())
            items.append((path, label))
    return items
