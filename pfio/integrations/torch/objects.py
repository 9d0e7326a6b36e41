"""PyTorch datasets of objects under a prefix of any pfio URL, with s3torchconnector's call
shape: code written for ``S3MapDataset`` / ``S3IterableDataset`` switches by changing the
import (``region=`` and ``endpoint=`` are S3 options of pfio too).

    from pfio.integrations.torch.objects import PfioObjectDataset

    def load(obj):                      # obj: a PfioObject (file-like, .url, .key, .size)
        return transform(Image.open(obj).convert("RGB"))

    train = PfioObjectDataset.from_prefix("s3://bucket/train/", transform=load)
    loader = DataLoader(train, batch_size=64, num_workers=2)

A batch's objects are fetched concurrently (a few threads per process) while those already
arrived are transformed, so two workers hide the storage's latency as well as more would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import torch.utils.data

from ..objects import (
    ObjectList,
    ObjectReader,
    PfioObject,
    list_objects,
    list_prefix,
    reader_plan,
)
from .placement import distributed_place

Transform = Callable[[PfioObject], Any]


def identity(obj: PfioObject) -> PfioObject:
    """The default transform: the object itself (as s3torchconnector's is the reader)."""
    return obj


class PfioObjectDataset(torch.utils.data.Dataset[Any]):
    """A map-style dataset of objects: item ``i`` is ``transform(object i)``, objects sorted
    by name. Make one with :meth:`from_prefix` or :meth:`from_objects`.

    ``dataset[i]`` gives the transform an object whose file opens when first read (a
    transform that reads only a header reads only that much); ``DataLoader`` asks for whole
    batches (:meth:`__getitems__`), whose objects are read whole, ``fetch_ahead`` at a time
    concurrently, and transformed in order as they arrive. The dataset pickles small and
    opens its filesystem again in each worker process (fork, spawn, forkserver).

    Args:
        objects: the objects (see :mod:`pfio.integrations.objects`).
        transform: applied to each :class:`~pfio.integrations.objects.PfioObject`.
        fetch_ahead: objects of a batch held fetched ahead of the transform (0: none; each
            object is opened when the transform reads it).
        fs_options: options of :func:`pfio.from_url` (``endpoint=...``, ``region=...``).
    """

    def __init__(self, objects: ObjectList, *, transform: Transform | None = None,
                 fetch_ahead: int = 16, **fs_options: Any) -> None:
        self.reader = ObjectReader(objects, fs_options)
        self.transform = transform or identity
        self.fetch_ahead = fetch_ahead

    @classmethod
    def from_prefix(cls, url: str, *, transform: Transform | None = None,
                    fetch_ahead: int = 16, **fs_options: Any) -> PfioObjectDataset:
        """The files under ``url`` (``s3://b/train/``, ``/data/train``, ``s3://b/train.zip``,
        ``s3://b/train.zip/images``...), recursively, sorted by name; see
        :func:`pfio.integrations.objects.list_prefix`.

        Raises:
            FileNotFoundError: nothing is at ``url``.
            ValueError: ``url`` holds no files.
        """
        return cls(list_prefix(url, **fs_options), transform=transform,
                   fetch_ahead=fetch_ahead, **fs_options)

    @classmethod
    def from_objects(cls, urls: str | Iterable[str], *, transform: Transform | None = None,
                     fetch_ahead: int = 16, **fs_options: Any) -> PfioObjectDataset:
        """The objects at ``urls``, in that order (not checked until read).

        Raises:
            ValueError: no URLs.
        """
        return cls(list_objects(urls), transform=transform, fetch_ahead=fetch_ahead,
                   **fs_options)

    @property
    def objects(self) -> ObjectList:
        """The dataset's objects (names, URLs, sizes)."""
        return self.reader.objects

    def __len__(self) -> int:
        return len(self.reader)

    def __getitem__(self, index: int) -> Any:
        return self.transform(self.reader.object(index))

    def __getitems__(self, indices: Sequence[int]) -> list[Any]:
        """``[self[i] for i in indices]``, the objects read whole and concurrently while
        those already arrived are transformed (``DataLoader`` calls this with each batch).

        Raises:
            IndexError: an index out of range (before anything is read).
            FileNotFoundError: an object is missing (the message names its URL).
        """
        if self.fetch_ahead <= 0:
            return [self[index] for index in indices]
        checked = [self.reader.checked(index) for index in indices]
        return [self.transform(obj)
                for obj in self.reader.fetch_many(checked, self.fetch_ahead)]


class PfioObjectIterableDataset(torch.utils.data.IterableDataset[Any]):
    """An iterable dataset of objects, split by object across distributed ranks and
    DataLoader workers; resumable with torchdata's ``StatefulDataLoader``.

    Each epoch's order (sorted names, or with ``shuffle`` a permutation drawn from
    ``seed + epoch``; call :meth:`set_epoch`) is dealt out round-robin to the ranks, then to
    each rank's workers (see :func:`pfio.integrations.objects.reader_plan`). While one
    object is transformed the next ``fetch_ahead`` are read in the background.

    Args:
        objects: the objects.
        transform: applied to each :class:`~pfio.integrations.objects.PfioObject`.
        shuffle, seed: shuffle the order of each epoch, reproducibly.
        rank, world_size: this process's place among distributed ranks (default: from
            ``torch.distributed`` when it is initialised, else 0 and 1).
        even: every rank reads the same number of objects per epoch (the order is padded by
            repeating it from the start, as ``DistributedSampler`` does), so no rank waits
            for the others at the end of an epoch; without it each object is read once.
        enable_sharding: False gives every rank and worker all the objects (as
            s3torchconnector's default does); True (pfio's default) splits them.
        fetch_ahead: objects read ahead of the transform (0: none, each is opened when
            the transform reads it).
        fs_options: options of :func:`pfio.from_url`.
    """

    def __init__(self, objects: ObjectList, *, transform: Transform | None = None,
                 shuffle: bool = False, seed: int = 0, rank: int | None = None,
                 world_size: int | None = None, even: bool = True,
                 enable_sharding: bool = True, fetch_ahead: int = 8,
                 **fs_options: Any) -> None:
        self.reader = ObjectReader(objects, fs_options)
        self.transform = transform or identity
        self.shuffle = shuffle
        self.seed = seed
        self.even = even
        self.enable_sharding = enable_sharding
        self.fetch_ahead = fetch_ahead
        self.rank, self.world_size = distributed_place(rank, world_size)
        self.epoch = 0
        self._resume_at = 0  # objects of this reader's plan to skip on the next __iter__
        self._yielded = 0    # objects of this reader's plan yielded in this epoch

    @classmethod
    def from_prefix(cls, url: str, *, transform: Transform | None = None,
                    shuffle: bool = False, seed: int = 0, rank: int | None = None,
                    world_size: int | None = None, even: bool = True,
                    enable_sharding: bool = True, fetch_ahead: int = 8,
                    **fs_options: Any) -> PfioObjectIterableDataset:
        """The files under ``url``, recursively (see :meth:`PfioObjectDataset.from_prefix`)."""
        return cls(list_prefix(url, **fs_options), transform=transform, shuffle=shuffle,
                   seed=seed, rank=rank, world_size=world_size, even=even,
                   enable_sharding=enable_sharding, fetch_ahead=fetch_ahead, **fs_options)

    @classmethod
    def from_objects(cls, urls: str | Iterable[str], *, transform: Transform | None = None,
                     shuffle: bool = False, seed: int = 0, rank: int | None = None,
                     world_size: int | None = None, even: bool = True,
                     enable_sharding: bool = True, fetch_ahead: int = 8,
                     **fs_options: Any) -> PfioObjectIterableDataset:
        """The objects at ``urls``, in that order."""
        return cls(list_objects(urls), transform=transform, shuffle=shuffle, seed=seed,
                   rank=rank, world_size=world_size, even=even,
                   enable_sharding=enable_sharding, fetch_ahead=fetch_ahead, **fs_options)

    @property
    def objects(self) -> ObjectList:
        """The dataset's objects (names, URLs, sizes)."""
        return self.reader.objects

    def set_epoch(self, epoch: int) -> None:
        """Use the order of ``epoch`` from the next iteration on."""
        self.epoch = epoch

    def my_indices(self) -> list[int]:
        """The objects this rank and DataLoader worker read in the current epoch, in order."""
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        rank, world_size = self.rank, self.world_size
        if not self.enable_sharding:
            rank, world_size, worker, workers = 0, 1, 0, 1
        plan = reader_plan(len(self.reader), epoch=self.epoch, seed=self.seed,
                           shuffle=self.shuffle, rank=rank, world_size=world_size,
                           worker=worker, num_workers=workers, even=self.even)
        indices: list[int] = plan.tolist()
        return indices

    def __iter__(self) -> Iterator[Any]:
        start, self._resume_at = self._resume_at, 0
        self._yielded = start
        return self._samples(self.my_indices()[start:])

    def _samples(self, indices: list[int]) -> Iterator[Any]:
        if self.fetch_ahead <= 0:
            objects: Iterator[PfioObject] = map(self.reader.object, indices)
        else:
            objects = self.reader.fetch_many(indices, self.fetch_ahead)
        for obj in objects:
            sample = self.transform(obj)
            self._yielded += 1
            yield sample

    def state_dict(self) -> dict[str, Any]:
        """Where this reader is: the epoch and how many of its objects it has yielded
        (``StatefulDataLoader`` takes it from each worker)."""
        return {"epoch": self.epoch, "yielded": self._yielded, "objects": len(self.reader)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume where :meth:`state_dict` was taken: the next iteration yields the objects
        not yet yielded, in order.

        Raises:
            ValueError: the state is of a dataset with another number of objects.
        """
        if state.get("objects", len(self.reader)) != len(self.reader):
            raise ValueError(f"the state is of a dataset of {state['objects']} objects, "
                             f"not {len(self.reader)}")
        self.epoch = int(state["epoch"])
        self._resume_at = self._yielded = int(state["yielded"])


__all__ = ["PfioObjectDataset", "PfioObjectIterableDataset", "identity"]
