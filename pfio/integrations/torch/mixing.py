"""``PfioMixedDataset``: samples of several indexed ``PfioWebDataset`` streams drawn in given
proportions, deterministic, resumable on any world size (its state holds each stream's).

The *schedule* says which stream each pick of a rank takes: picks go in blocks of
:data:`BLOCK`; within a block each stream gets its share (the stream furthest behind its
weight goes next, so after any whole block every stream is within one sample of its
proportion), and the block's picks are shuffled by ``seed`` and the epoch. Every rank
follows the same schedule, taking its own share of each stream in order, so all ranks take
the same number of samples of each stream: the epoch ends, on every rank at once, when a
rank's share of some stream runs out.

Like the streams, the mixed sequence of a rank is dealt to DataLoader workers in whole
batches (``batch_size``), so what a rank consumed is a prefix of it, and
:meth:`PfioMixedDataset.state_dict` with ``samples_seen`` (all ranks together) gives each
stream's state and where the schedule stands.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import torch.utils.data

from ..shards.placement import worker_positions
from ..shards.plan import Place
from .placement import worker_place
from .webdataset import PfioWebDataset

#: picks per block of the schedule
BLOCK = 100
STATE_FORMAT = "pfio-mixed-state"


def schedule(weights: Sequence[float], seed: int, epoch: int) -> Iterator[int]:
    """The stream of each pick, endlessly (see the module docstring)."""
    rng = random.Random(f"mix:{seed}:{epoch}")
    counts = [0] * len(weights)
    n = 0
    while True:
        picks = []
        for _ in range(BLOCK):
            n += 1
            i = max(range(len(weights)), key=lambda k: (weights[k] * n - counts[k], -k))
            counts[i] += 1
            picks.append(i)
        rng.shuffle(picks)
        yield from picks


class PfioMixedDataset(torch.utils.data.IterableDataset[Any]):
    """Samples of ``datasets`` (indexed :class:`PfioWebDataset` of one rank layout) in the
    proportions ``weights`` (see the module docstring). Each sample goes through its own
    dataset's decoder and transform.

    Args:
        datasets: datasets made over an index, with the same ``rank`` and ``world_size``.
        weights: positive weights, one per dataset (normalised).
        seed: seeds the schedule.
        batch_size: the DataLoader's batch size (workers take whole batches in turn).

    Raises:
        ValueError: no datasets, a dataset over shard URLs, weights that do not fit.
    """

    def __init__(self, datasets: Sequence[PfioWebDataset], weights: Sequence[float],
                 seed: int = 0, batch_size: int | None = None) -> None:
        if not datasets or len(weights) != len(datasets):
            raise ValueError(f"{len(datasets)} datasets and {len(weights)} weights: give "
                             "one positive weight per dataset")
        if any(not w > 0 for w in weights):
            raise ValueError(f"weights must be positive, got {list(weights)}")
        if any(d.indexed is None for d in datasets):
            raise ValueError("PfioMixedDataset mixes datasets made over an index "
                             "(PfioWebDataset(<directory of pfio-index.json>))")
        layouts = {(d.rank, d.world_size) for d in datasets}
        if len(layouts) != 1:
            raise ValueError(f"the datasets have different (rank, world_size): {layouts}")
        self.datasets = list(datasets)
        total = float(sum(weights))
        self.weights = [w / total for w in weights]
        self.seed = seed
        self.batch_size = batch_size
        self.rank, self.world_size = layouts.pop()
        self.epoch = datasets[0].epoch
        self.start = 0  # schedule picks a rank took before this stretch of the epoch
        self.seen_before = 0  # samples seen by all ranks before it

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch``'s schedule and orders, in every dataset."""
        if epoch != self.epoch:
            self.start = self.seen_before = 0
        self.epoch = epoch
        for dataset in self.datasets:
            dataset.set_epoch(epoch)

    def sequence(self) -> list[tuple[int, int]]:
        """This rank's ``(stream, global sample number)`` in order, from where it stands."""
        shares = []
        for d in self.datasets:
            source = d.indexed
            assert source is not None
            shares.append(source.epochs.share(self.epoch, source.history_of(self.epoch),
                                              d.rank, d.world_size))
        taken = [0] * len(shares)
        out: list[tuple[int, int]] = []
        for n, i in enumerate(schedule(self.weights, self.seed, self.epoch)):
            if n < self.start:
                continue
            if taken[i] >= len(shares[i]):
                return out
            out.append((i, shares[i][taken[i]]))
            taken[i] += 1
        raise AssertionError("unreachable")  # pragma: no cover

    def __len__(self) -> int:
        return len(self.sequence())

    def __iter__(self) -> MixedIterator:
        return MixedIterator(self, worker_place(self.rank, self.world_size))

    def state_dict(self, samples_seen: int | None = None) -> dict[str, Any]:
        """Each stream's state and the schedule's position after ``samples_seen`` samples
        of the epoch (all ranks together, from its start); without, where this stretch
        began (what ``StatefulDataLoader`` saves beside its workers' states).

        Raises:
            ValueError: ``samples_seen`` not a multiple of the world size, or fewer than
                when the epoch was resumed.
        """
        seen = self.seen_before if samples_seen is None else int(samples_seen)
        mine = seen - self.seen_before
        if mine < 0 or mine % self.world_size:
            raise ValueError(f"{seen} samples cannot have been seen by {self.world_size} "
                             f"ranks in lockstep since {self.seen_before}")
        picks = [i for i, _ in self.sequence()[:mine // self.world_size]]
        streams = []
        for k, d in enumerate(self.datasets):
            source = d.indexed
            assert source is not None
            history = source.history_of(self.epoch)
            before = history[-1][0] if history else 0
            streams.append(d.state_dict(before + picks.count(k) * self.world_size))
        return {"format": STATE_FORMAT, "epoch": self.epoch, "seed": self.seed,
                "weights": self.weights, "samples_seen": seen,
                "position": self.start + len(picks), "streams": streams}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Go on from ``state`` (any world size and worker count).

        Raises:
            ValueError: a state of other streams, weights or seed.
        """
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"not a PfioMixedDataset state: {str(state)[:80]}")
        if len(state["streams"]) != len(self.datasets) or state["seed"] != self.seed or \
                [round(w, 12) for w in state["weights"]] != [round(w, 12) for w in self.weights]:
            raise ValueError("the state was saved with other streams, weights or seed")
        for dataset, stream in zip(self.datasets, state["streams"], strict=True):
            dataset.load_state_dict(stream)
        self.epoch = int(state["epoch"])
        self.start = int(state["position"])
        self.seen_before = int(state["samples_seen"])


class MixedIterator:
    """One reader's part of a rank's mixed sequence; its state is the samples it yielded."""

    def __init__(self, mixed: PfioMixedDataset, place: Place) -> None:
        self._mixed = mixed
        self.place = place
        self._yielded = 0
        self._samples: Iterator[Any] | None = None

    def __iter__(self) -> MixedIterator:
        return self

    def _generate(self) -> Iterator[Any]:
        mixed, place = self._mixed, self.place
        sequence = mixed.sequence()
        mine = [sequence[p] for p in worker_positions(
            len(sequence), place.worker, place.num_workers, mixed.batch_size)][self._yielded:]
        readers = []
        for k, dataset in enumerate(mixed.datasets):
            source = dataset.indexed
            assert source is not None
            ids = [g for i, g in mine if i == k]
            readers.append((source.reader().read(ids), source.decoder, source.transform))
        for i, _ in mine:
            samples, decoder, transform = readers[i]
            _, sample = next(samples)
            if decoder is not None:
                sample = decoder(sample)
            yield transform(sample) if transform is not None else sample

    def __next__(self) -> Any:
        if self._samples is None:
            self._samples = self._generate()
        item = next(self._samples)
        self._yielded += 1
        return item

    def state_dict(self) -> dict[str, Any]:
        """This reader's place and the samples it yielded."""
        place = self.place
        return {"place": [place.rank, place.world_size, place.worker, place.num_workers],
                "yielded": self._yielded}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state`` (same layout), before the first sample."""
        place = self.place
        if list(state["place"]) != [place.rank, place.world_size, place.worker,
                                    place.num_workers]:
            raise ValueError(f"a state saved at {tuple(state['place'])} cannot resume here: "
                             "use the dataset's state_dict(samples_seen)")
        self._yielded = int(state["yielded"])
