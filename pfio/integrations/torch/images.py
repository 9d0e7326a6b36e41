"""``PfioImageDataset``: a map-style PyTorch dataset of images and labels over any pfio URL
(a directory, a zip/tar container, a list file or a list of URLs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch.utils.data

from ..image_items import collect
from ..image_reader import ImageReader


class PfioImageDataset(torch.utils.data.Dataset[tuple[Any, Any]]):
    """Images and labels from a directory, a zip/tar container, a list file or a list of URLs.

    Items are ``(image, label)``: images are HWC uint8 RGB arrays (``decoder="cv2"``) or RGB PIL
    images (``decoder="pil"``), so torchvision transforms apply. Sub-folders of a directory or
    container are the classes (``dataset.classes``), as in torchvision's ``ImageFolder``.

    Args:
        source: ``"s3://b/train.zip"``, ``"s3://b/train/"``, ``"s3://b/train.txt"`` (``path label``
            lines), or a list of URLs / ``(url, label)`` pairs.
        transform: applied to each image.
        target_transform: applied to each label.
        decoder: ``"cv2"`` or ``"pil"``.
        cache: ``None``, ``"raw"`` or ``"decoded"``: cache encoded bytes or decoded pixels in a
            cache shared by DataLoader workers, so epoch 2 reads local disk.
        cache_dir: the cache's directory.
        root: base of relative paths in a list file (default: the list file's directory);
            an absolute path in a list file is that file, as in Chainer's
            ``LabeledImageDataset``.

    The filesystem is opened lazily in each worker process (fork, spawn and forkserver all work)
    and the dataset pickles small. Works with ``DistributedSampler``.
    """

    def __init__(self, source: str | Sequence[Any], transform: Callable[[Any], Any] | None = None,
                 decoder: str = "cv2", cache: str | None = None, cache_dir: str | None = None,
                 root: str | None = None,
                 target_transform: Callable[[int], Any] | None = None) -> None:
        self.reader = ImageReader(collect(source, root), decoder, cache, cache_dir)
        self.transform = transform
        self.target_transform = target_transform

    @property
    def classes(self) -> list[str]:
        """Class names in label order (directory and container sources)."""
        return self.reader.items.classes

    def __len__(self) -> int:
        return len(self.reader.items)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"index {index} out of range for {len(self)} images")
        image = self.reader.image(index)
        label: Any = self.reader.items.label(index)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __getitems__(self, indices: Sequence[int]) -> list[tuple[Any, Any]]:
        """The items at ``indices``, in order: ``[self[i] for i in indices]``, but the images
        are fetched a few at a time concurrently while those already arrived are decoded
        and transformed (``DataLoader`` calls this with each batch's indices), so a worker
        hides the storage's latency instead of waiting for each image in turn.

        Raises:
            IndexError: an index out of range.
            FileNotFoundError: an image is missing (the message names it).
        """
        items: list[tuple[Any, Any]] = []
        for index, image in self.reader.images(indices):
            label: Any = self.reader.items.label(index)
            if self.transform is not None:
                image = self.transform(image)
            if self.target_transform is not None:
                label = self.target_transform(label)
            items.append((image, label))
        return items
