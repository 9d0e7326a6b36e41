"""Sample-level placement over an index: which samples each rank and DataLoader worker
yields in an epoch, and where an interrupted epoch goes on (framework-free, plain ints).

Samples are numbered globally in index order (see :class:`~.index.Index`).

*The epoch's order* (:func:`epoch_order`) depends on the index's sample counts, ``seed``
and the epoch only, never on the world size or the workers. Without shuffling it is index
order. With shuffling, the shards are put in a random order, their samples laid end to end,
and the samples of each *block* of ``shuffle_block`` consecutive places permuted: a block
spans several shards when it is larger than a shard.

*Ranks* (:func:`rank_share`): the samples not yet seen are cut into ``world_size``
contiguous slices of ``ceil(n / world_size)`` samples (``floor`` with ``drop_last``, the
tail left out); the last slice is padded with samples from the start, so at most
``world_size - 1`` repeat. Contiguous slices keep each rank on few shards: its reads are
runs of consecutive samples.

*Workers* (:func:`worker_positions`): with a ``batch_size``, a rank's slice is dealt in
batches, batch ``j`` to worker ``j % num_workers``, as a DataLoader takes batches from its
workers in turn; so what the rank has consumed is always a prefix of its slice. Without,
each worker takes a contiguous part (longest runs, but then only torchdata's per-worker
state resumes exactly when ``num_workers > 1``).

*Resuming* (:func:`remaining`): an epoch's history is a list of segments
``[samples_seen, world_size, drop_last]``: up to ``samples_seen`` samples in all (counted
from the start of the epoch) were consumed by ``world_size`` ranks in lockstep, each a
prefix of its slice of what the segments before left. So the samples not yet seen are a
function of the order and the history alone, whatever the world size that goes on.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

#: one segment of an epoch's history: samples seen (in all, from the epoch's start) when it
#: ended, the world size and drop_last (0/1) it ran with
Segment = tuple[int, int, int]


def epoch_order(counts: Sequence[int], seed: int, epoch: int, shuffle: bool,
                shuffle_block: int) -> list[int]:
    """Global sample numbers in the order of ``epoch`` (see the module docstring)."""
    starts, total = [], 0
    for n in counts:
        starts.append(total)
        total += n
    if not shuffle:
        return list(range(total))
    shards = list(range(len(counts)))
    random.Random(f"shards:{seed}:{epoch}").shuffle(shards)
    order = [i for s in shards for i in range(starts[s], starts[s] + counts[s])]
    block = max(1, shuffle_block)
    if block > 1:
        rng = random.Random(f"samples:{seed}:{epoch}")
        for first in range(0, total, block):
            part = order[first:first + block]
            rng.shuffle(part)
            order[first:first + block] = part
    return order


def share_size(n: int, world_size: int, drop_last: bool) -> int:
    """Samples each rank yields out of ``n``."""
    return n // world_size if drop_last else -(-n // world_size)


def rank_share(remaining_order: Sequence[int], rank: int, world_size: int,
               drop_last: bool) -> list[int]:
    """The samples ``rank`` yields, in order: its contiguous slice of ``remaining_order``,
    the last one padded from the start (see the module docstring)."""
    n = len(remaining_order)
    per = share_size(n, world_size, drop_last)
    first = rank * per
    out = list(remaining_order[first:min(first + per, n)])
    while n and len(out) < per:  # padding: from the start, cyclically when n is tiny
        k = (first + len(out)) % n
        out.append(remaining_order[k])
    return out


def worker_positions(share_len: int, worker: int, num_workers: int,
                     batch_size: int | None) -> list[int]:
    """The positions in a rank's share that ``worker`` yields, in order."""
    if num_workers <= 1:
        return list(range(share_len))
    if batch_size is None:
        part = -(-share_len // num_workers)
        return list(range(worker * part, min((worker + 1) * part, share_len)))
    return [p for j in range(worker, -(-share_len // batch_size), num_workers)
            for p in range(j * batch_size, min((j + 1) * batch_size, share_len))]


def remaining(order: Sequence[int], history: Sequence[Sequence[int]]) -> list[int]:
    """The samples of ``order`` not seen after ``history`` (see the module docstring):
    segments ``(seen, world_size, drop_last)``, as tuples or as lists from a state dict.

    Raises:
        ValueError: a segment whose count does not fit: fewer seen than before, a count
            its world size does not divide (ranks consume in lockstep), or more than the
            ranks held.
    """
    left = list(order)
    before = 0
    for seen, world_size, drop_last in history:
        consumed = seen - before
        if consumed < 0 or world_size < 1:
            raise ValueError(f"resume history {list(history)}: samples seen go down")
        if consumed % world_size:
            raise ValueError(f"{consumed} samples cannot have been consumed by {world_size} "
                             "ranks in lockstep: samples_seen counts all ranks' samples")
        each = consumed // world_size
        per = share_size(len(left), world_size, bool(drop_last))
        if each > per:
            raise ValueError(f"{consumed} samples seen by {world_size} ranks, but they held "
                             f"{per} each")
        taken = bytearray(len(left))
        for r in range(world_size):
            for p in range(r * per, min(r * per + each, len(left))):
                taken[p] = 1
        left = [s for s, t in zip(left, taken, strict=True) if not t]
        before = seen
    return left
