"""Where the calling process stands among distributed ranks and DataLoader workers: the
placement the iterable datasets share (the shard plans themselves are framework-free,
:mod:`pfio.integrations.shards.plan`)."""

from __future__ import annotations

import torch.utils.data

from ..shards.plan import Place


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
