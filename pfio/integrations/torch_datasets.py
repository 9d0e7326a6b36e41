"""PyTorch datasets over any pfio URL: a map-style image dataset and an iterable one that reads
sequential shards (zip/tar files front to back)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch.utils.data

from ..api import from_url
from .image_items import IMAGE_EXTENSIONS, collect, decode_image
from .image_reader import ImageReader


class PfioImageDataset(torch.utils.data.Dataset):
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
        root: base of relative paths in a list file (default: the list file's directory).

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


class PfioShardDataset(torch.utils.data.IterableDataset):
    """Samples read front to back from shards (zip or tar files on any filesystem).

    Each shard is read by exactly one DataLoader worker of one rank: the shard list (shuffled
    with ``seed + epoch`` when ``shuffle``) is split across ``world_size * num_workers`` readers.
    Within a shard, members are read in archive order (sequential IO); with ``shuffle`` they
    are also shuffled through a buffer of ``shuffle_buffer`` samples. Call :meth:`set_epoch`
    before each epoch for a new, deterministic order.

    Items are ``(image, label)``, the label being the index in ``classes`` of the member's top
    directory (-1 when it has none or ``classes`` does not name it).

    Args:
        shards: URLs of zip/tar files.
        classes: class names; default: the top directories found in the first shard.
        rank, world_size: this process's place among distributed ranks (default: from
            ``torch.distributed`` when it is initialised, else 0 and 1).
    """

    def __init__(self, shards: Sequence[str], transform: Callable[[Any], Any] | None = None,
                 decoder: str = "cv2", shuffle: bool = False, seed: int = 0,
                 shuffle_buffer: int = 256, classes: Sequence[str] | None = None,
                 rank: int | None = None, world_size: int | None = None,
                 extensions: tuple[str, ...] = IMAGE_EXTENSIONS) -> None:
        if not shards:
            raise ValueError("no shards given")
        self.shards = list(shards)
        self.transform = transform
        self.decoder = decoder
        self.shuffle = shuffle
        self.seed = seed
        self.shuffle_buffer = max(1, shuffle_buffer)
        self.extensions = extensions
        self.rank, self.world_size = _distributed_place(rank, world_size)
        self.classes = list(classes) if classes is not None else _top_dirs(self.shards[0])
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Use the shuffling order of ``epoch``."""
        self.epoch = epoch

    def my_shards(self) -> list[str]:
        """The shards this rank and DataLoader worker read in the current epoch, in order."""
        order = list(self.shards)
        if self.shuffle:
            random.Random(self.seed + self.epoch).shuffle(order)
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        reader = self.rank * workers + worker
        return order[reader::self.world_size * workers]

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        rng = random.Random((self.seed + self.epoch) * 7919 + self.rank)
        samples = self._samples()
        if not self.shuffle:
            yield from samples
            return
        buffer: list[tuple[Any, int]] = []
        for sample in samples:
            buffer.append(sample)
            if len(buffer) >= self.shuffle_buffer:
                yield buffer.pop(rng.randrange(len(buffer)))
        rng.shuffle(buffer)
        yield from buffer

    def _samples(self) -> Iterator[tuple[Any, int]]:
        index = {name: i for i, name in enumerate(self.classes)}
        for shard in self.my_shards():
            with from_url(shard) as archive:
                for st in archive.list(recursive=True, detail=True):
                    name = st.filename
                    if st.isdir() or not name.lower().endswith(self.extensions):
                        continue
                    with archive.open(name, "rb") as f:
                        image = decode_image(f.read(), self.decoder)
                    if self.transform is not None:
                        image = self.transform(image)
                    top = name.split("/", 1)[0] if "/" in name else ""
                    yield image, index.get(top, -1)


def _distributed_place(rank: int | None, world_size: int | None) -> tuple[int, int]:
    import torch.distributed as dist

    if rank is None or world_size is None:
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, {world_size})")
    return rank, world_size


def _top_dirs(shard: str) -> list[str]:
    with from_url(shard) as archive:
        return sorted(st.filename for st in archive.list(detail=True) if st.isdir())
