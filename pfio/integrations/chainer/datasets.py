"""Chainer's image dataset over any pfio URL (a directory, a zip/tar container, a list file or
a list of URLs), on the framework-free readers of :mod:`pfio.integrations.image_items`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..image_items import collect
from ..image_reader import ImageReader
from .compat import import_chainer

import_chainer()
from chainer.dataset.dataset_mixin import DatasetMixin  # noqa: E402 - after the NumPy 2 shim


class PfioImageDataset(DatasetMixin):
    """Images and labels from a directory, a zip/tar container, a list file or a list of URLs.

    Examples are ``(image, label)`` in Chainer's convention (as ``LabeledImageDataset``): the
    image a CHW array of ``dtype`` (float32 by default, values 0-255), the label of
    ``label_dtype``. Sources and caching are those of
    :class:`pfio.integrations.torch.PfioImageDataset`.
    """

    def __init__(self, source: str | Sequence[Any], dtype: Any = np.float32,
                 label_dtype: Any = np.int32, cache: str | None = None,
                 cache_dir: str | None = None, root: str | None = None) -> None:
        self.reader = ImageReader(collect(source, root), "cv2", cache, cache_dir)
        self.dtype = dtype
        self.label_dtype = label_dtype

    def __len__(self) -> int:
        return len(self.reader.items)

    def get_example(self, i: int) -> tuple[np.ndarray, Any]:
        image = self.reader.image(i).transpose(2, 0, 1).astype(self.dtype)
        return image, np.array(self.reader.items.label(i), dtype=self.label_dtype)
