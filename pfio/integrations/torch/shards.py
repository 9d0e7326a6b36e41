"""``PfioShardDataset``: an iterable PyTorch dataset of images read front to back from shards
(tar, tar.gz, zip) on any filesystem, each shard by exactly one worker of one rank."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch.utils.data

from ..image_items import IMAGE_EXTENSIONS, decode_image
from ..shards import SampleStream, expand_urls, iter_members
from ..shards.plan import epoch_order, reader_items
from .placement import distributed_place, worker_place


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


def _top_dirs(shard: str) -> list[str]:
    """The top directories of the members of ``shard``, read front to back (one GET of a
    tar shard on S3, where listing it as a container locates each header with a request)."""
    return sorted({member.name.split("/", 1)[0] for member in iter_members(shard)
                   if "/" in member.name})
