"""Epochs over an index: the samples each reader yields, and the small state that resumes
an epoch on any number of ranks and workers (framework-free; see :mod:`.placement`).

A state (:meth:`IndexedEpochs.state`) is a JSON-serialisable dict::

    {"format": "pfio-epoch-state", "version": 1, "index": "<identity>", "seed": 0,
     "shuffle": true, "shuffle_block": 4096, "epoch": 3, "samples_seen": 51200,
     "history": [[51200, 64, 0]]}

``samples_seen`` counts the samples of the epoch seen by all ranks together; ``history``
holds one ``[samples_seen, world_size, drop_last]`` per stretch of the epoch run at one
world size (one more each time it is resumed at another), which with the index and the
seed says exactly which samples were seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .index import Index
from .placement import Segment, epoch_order, rank_share, remaining, worker_positions
from .plan import Place

STATE_FORMAT = "pfio-epoch-state"
STATE_VERSION = 1


@dataclass
class IndexedEpochs:
    """The placement of ``index``'s samples, epoch after epoch (see :mod:`.placement`)."""

    index: Index
    seed: int = 0
    shuffle: bool = False
    shuffle_block: int = 4096
    drop_last: bool = False
    batch_size: int | None = None
    _memo: tuple[tuple[int, tuple[tuple[int, ...], ...]], list[int]] | None = field(
        default=None, repr=False)

    def __post_init__(self) -> None:
        if self.shuffle_block < 1:
            raise ValueError(f"shuffle_block must be >= 1, not {self.shuffle_block}")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {self.batch_size}")

    def order(self, epoch: int) -> list[int]:
        """Every sample, in the order of ``epoch``."""
        return epoch_order(self.index.counts(), self.seed, epoch, self.shuffle,
                           self.shuffle_block)

    def left(self, epoch: int, history: Sequence[Segment] = ()) -> list[int]:
        """The samples of ``epoch`` not seen after ``history``, in order."""
        key = (epoch, tuple(tuple(s) for s in history))
        memo = self._memo
        if memo is None or memo[0] != key:
            memo = self._memo = (key, remaining(self.order(epoch), history))
        return memo[1]

    def share(self, epoch: int, history: Sequence[Segment], rank: int,
              world_size: int) -> list[int]:
        """The samples ``rank`` of ``world_size`` yields in ``epoch`` after ``history``."""
        return rank_share(self.left(epoch, history), rank, world_size, self.drop_last)

    def reader_ids(self, epoch: int, history: Sequence[Segment], place: Place) -> list[int]:
        """The samples ``place`` yields, in order."""
        share = self.share(epoch, history, place.rank, place.world_size)
        return [share[p] for p in worker_positions(len(share), place.worker,
                                                   place.num_workers, self.batch_size)]

    def state(self, epoch: int, history: Sequence[Segment], world_size: int,
              samples_seen: int | None) -> dict[str, Any]:
        """The state after ``samples_seen`` samples of ``epoch`` (all ranks together,
        counted from the epoch's start), run by ``world_size`` ranks since ``history``.

        Raises:
            ValueError: ``samples_seen`` does not fit (see :func:`.placement.remaining`).
        """
        segments = [list(s) for s in history]
        if samples_seen is not None:
            segments.append([int(samples_seen), world_size, int(self.drop_last)])
            remaining(range(len(self.index)), segments)  # (raises when it does not fit)
        seen = segments[-1][0] if segments else 0
        return {"format": STATE_FORMAT, "version": STATE_VERSION,
                "index": self.index.identity, "seed": self.seed, "shuffle": self.shuffle,
                "shuffle_block": self.shuffle_block, "epoch": epoch, "samples_seen": seen,
                "history": segments}

    def check(self, state: dict[str, Any]) -> tuple[int, list[Segment]]:
        """``(epoch, history)`` of a state :meth:`state` gave.

        Raises:
            ValueError: a state of another index, or of another order (seed, shuffling),
                or not a state at all.
        """
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError("not a pfio epoch state (no \"format\": "
                             f"\"{STATE_FORMAT}\"): {str(state)[:80]}")
        if state.get("index") != self.index.identity:
            raise ValueError(f"the state was saved on another index ({state.get('index')}) "
                             f"than {self.index.url} ({self.index.identity})")
        mine = {"seed": self.seed, "shuffle": self.shuffle, "shuffle_block": self.shuffle_block}
        theirs = {k: state.get(k) for k in mine}
        if theirs != mine:
            raise ValueError(f"the state was saved with {theirs}, this dataset has {mine}: "
                             "the epoch's order would differ")
        history = [(int(s[0]), int(s[1]), int(s[2])) for s in state.get("history", [])]
        return int(state["epoch"]), history
