"""PyTorch datasets over any pfio URL: a map-style image dataset and an iterable one that reads
shards (tar, tar.gz, zip) front to back; the placement helpers the iterable datasets share."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch.utils.data

from .image_items import IMAGE_EXTENSIONS, collect, decode_image
from .image_reader import ImageReader
from .shards import SampleStream, expand_urls, iter_members
from .shards.plan import Place, epoch_order, reader_items


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


class PfioShardDataset(torch.utils.data.IterableDataset[tuple[Any, int]]):
    """Images read front to back from shards (tar, tar.gz or zip files on any filesystem).

    Each shard is read by exactly one DataLoader worker of one rank (see
    :mod:`pfio.integrations.shards.plan`): the shard list (shuffled with ``seed + epoch``
    when ``shuffle``) is split across ranks, then each rank's shards across its workers. A
    tar shard is read as one stream (one GET on S3); a zip shard member by member in archive
    order. With ``shuffle``, samples also go through a buffer of ``shuffle_buffer``. Call
    :meth:`set_epoch` before each epoch for a new, deterministic order.

    Items are ``(image, label)`` for every member whose extension is in ``extensions``. The
    label is the sample's ``.cls`` member when it has one (webdataset layout:
    ``key.jpg`` + ``key.cls``), else the index in ``classes`` of the member's top directory
    (-1 when it has none or ``classes`` does not name it). Members are grouped into samples
    as :func:`pfio.integrations.shards.split_name` says (names whose base name starts with
    ``.`` are skipped). For samples of several fields (``.json``, ``.npy``, ...), see
    :class:`pfio.integrations.torch.PfioWebDataset`.

    Args:
        shards: URLs of shards, or a brace pattern (``"s3://b/train-{0000..0011}.tar"``).
        classes: class names; default: the top directories found in the first shard.
        rank, world_size: this process's place among distributed ranks (default: from
            ``torch.distributed`` when it is initialised, else 0 and 1).
    """

    def __init__(self, shards: str | Sequence[str],
                 transform: Callable[[Any], Any] | None = None,
                 decoder: str = "cv2", shuffle: bool = False, seed: int = 0,
                 shuffle_buffer: int = 256, classes: Sequence[str] | None = None,
                 rank: int | None = None, world_size: int | None = None,
                 extensions: tuple[str, ...] = IMAGE_EXTENSIONS) -> None:
        self.shards = expand_urls(shards)
        if not self.shards:
            raise ValueError("no shards given")
        self.transform = transform
        self.decoder = decoder
        self.shuffle = shuffle
        self.seed = seed
        self.shuffle_buffer = max(1, shuffle_buffer)
        self.extensions = tuple(e.lower() for e in extensions)
        self.rank, self.world_size = distributed_place(rank, world_size)
        self.classes = list(classes) if classes is not None else _top_dirs(self.shards[0])
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Use the shuffling order of ``epoch``."""
        self.epoch = epoch

    def my_shards(self) -> list[str]:
        """The shards this rank and DataLoader worker read in the current epoch, in order."""
        order = epoch_order(self.shards, self.seed, self.epoch, self.shuffle)
        return reader_items(order, worker_place(self.rank, self.world_size))

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        place = worker_place(self.rank, self.world_size)
        samples = SampleStream(self.my_shards(),
                               shuffle_buffer=self.shuffle_buffer if self.shuffle else 0,
                               rng_seed=f"{self.seed}:{self.epoch}:{place.rank}:{place.worker}")
        index = {name: i for i, name in enumerate(self.classes)}
        for sample in samples:
            key = sample["__key__"]
            label = int(sample["cls"]) if "cls" in sample else \
                index.get(key.split("/", 1)[0] if "/" in key else "", -1)
            for ext, data in sample.items():
                if ext.startswith("__") or "." + ext.rpartition(".")[2] not in self.extensions:
                    continue
                image = decode_image(data, self.decoder)
                if self.transform is not None:
                    image = self.transform(image)
                yield image, label


def distributed_place(rank: int | None, world_size: int | None) -> tuple[int, int]:
    """``(rank, world_size)``: as given, else from ``torch.distributed`` when it is
    initialised, else ``(0, 1)``.

    Raises:
        ValueError: ``rank`` is not in ``[0, world_size)``.
    """
    import torch.distributed as dist

    if rank is None or world_size is None:
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, {world_size})")
    return rank, world_size


def worker_place(rank: int, world_size: int) -> Place:
    """The :class:`~pfio.integrations.shards.plan.Place` of the calling process: ``rank`` of
    ``world_size``, and its DataLoader worker (0 of 1 outside a worker)."""
    info = torch.utils.data.get_worker_info()
    worker, workers = (info.id, info.num_workers) if info else (0, 1)
    return Place(rank, world_size, worker, workers)


def _top_dirs(shard: str) -> list[str]:
    """The top directories of the members of ``shard``, read front to back (one GET of a
    tar shard on S3, where listing it as a container locates each header with a request)."""
    return sorted({member.name.split("/", 1)[0] for member in iter_members(shard)
                   if "/" in member.name})
