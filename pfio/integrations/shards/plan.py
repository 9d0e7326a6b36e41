"""Which items (shards, objects) each reader reads, how many samples it yields, and where it
stands: the framework-free part of distributed, even and resumable datasets.

A *reader* is one DataLoader worker of one rank (:class:`Place`). Items are split first
across ranks (item ``i`` of the epoch's order goes to rank ``i % world_size``), then a
rank's items across its workers (its ``j``-th item to worker ``j % num_workers``), so every
item is read by exactly one reader and a rank's first item is its worker 0's first item.

Even epochs (DDP needs every rank to take the same number of steps): with per-item sample
counts, :func:`even_targets` gives each worker index ``w`` the largest count any rank's worker
``w`` has; every reader yields exactly its target, padding after its own items by repeating
samples from the start of its own items (:func:`padding_items`; a worker with no items repeats
its rank's). So every rank yields the same samples per worker, hence the same number of
batches per worker, hence the same steps. With one rank nothing is padded.

The epoch's order is the items shuffled by ``random.Random(seed + epoch)`` (or kept).

Resuming: a reader's place in its stream is a :class:`Position` (the slot, i.e. the index in
the reader's list of items including padding passes, the sample index within that slot's
item, and a ``resume`` token the item's reader understands, e.g. a byte offset), which turns
into and from a plain dict of ints for ``state_dict()``.

Datasets of one sample per object (``PfioObjectIterableDataset``) deal objects out the same
way but pad as ``torch.utils.data.DistributedSampler`` does, repeating the epoch's order from
its start (:func:`pfio.integrations.objects.reader_plan`): with one sample per item that
gives every rank ``ceil(count / world_size)`` samples, also when there are fewer objects
than ranks, which per-worker padding refuses.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Place:
    """One reader: DataLoader worker ``worker`` of ``num_workers``, on rank ``rank`` of
    ``world_size``."""

    rank: int = 0
    world_size: int = 1
    worker: int = 0
    num_workers: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.rank < self.world_size:
            raise ValueError(f"rank {self.rank} is not in [0, {self.world_size})")
        if not 0 <= self.worker < self.num_workers:
            raise ValueError(f"worker {self.worker} is not in [0, {self.num_workers})")

    def for_rank(self, rank: int, worker: int | None = None) -> Place:
        """The same layout, for another rank (and worker)."""
        return Place(rank, self.world_size, self.worker if worker is None else worker,
                     self.num_workers)


def epoch_order(items: Sequence[T], seed: int, epoch: int, shuffle: bool) -> list[T]:
    """The items in the order of ``epoch``: shuffled by ``random.Random(seed + epoch)``."""
    order = list(items)
    if shuffle:
        random.Random(seed + epoch).shuffle(order)
    return order


def rank_items(order: Sequence[T], place: Place) -> list[T]:
    """The items of ``place``'s rank."""
    return list(order[place.rank::place.world_size])


def reader_items(order: Sequence[T], place: Place) -> list[T]:
    """The items ``place`` reads, in order (see the module docstring)."""
    return rank_items(order, place)[place.worker::place.num_workers]


def even_targets(order: Sequence[T], counts: dict[T, int] | Sequence[int],
                 place: Place) -> list[int]:
    """Samples each worker index yields when epochs are even: for worker ``w``, the most
    samples any rank's worker ``w`` has (``counts``: per item, by item or in ``order``'s
    order).

    Raises:
        ValueError: fewer items than ranks (a rank with nothing to repeat).
    """
    if len(order) < place.world_size:
        raise ValueError(f"{len(order)} items cannot give {place.world_size} ranks even "
                         "epochs: each rank needs one at least")
    by_position = counts if not isinstance(counts, dict) else [counts[i] for i in order]
    if len(by_position) != len(order):
        raise ValueError(f"{len(by_position)} counts for {len(order)} items")
    positions = list(range(len(order)))
    return [max(sum(by_position[i] for i in reader_items(positions, place.for_rank(r, w)))
                for r in range(place.world_size))
            for w in range(place.num_workers)]


def padding_items(order: Sequence[T], place: Place) -> list[T]:
    """The items a reader repeats (cyclically, from the start) once its own are read: its
    own, or its rank's when it has none."""
    return reader_items(order, place) or rank_items(order, place)


@dataclass(frozen=True)
class Position:
    """A reader's place in its stream: ``slot`` (index into its items, padding passes
    included), ``sample`` (samples of that slot already taken) and ``resume`` (where that
    slot's item is read from next; 0 at its start)."""

    slot: int = 0
    sample: int = 0
    resume: int = 0

    def to_dict(self) -> dict[str, int]:
        """Plain ints, for a ``state_dict``."""
        return asdict(self)

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> Position:
        """The position ``to_dict`` gave."""
        return cls(int(state["slot"]), int(state["sample"]), int(state["resume"]))

    def key(self) -> tuple[int, int]:
        """Orders positions along the stream."""
        return self.slot, self.sample
