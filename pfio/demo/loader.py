"""The demo's DataLoader, and how it picks up an epoch where a checkpoint left it.

With torchdata installed (the ``demo`` extra has it) the loader is a
``torchdata.stateful_dataloader.StatefulDataLoader``: its ``state_dict()`` (where the sampler
is in the epoch, what the workers had prefetched) goes into every checkpoint, and a resumed
run hands it back with ``load_state_dict``, so the resumed epoch yields exactly the batches
the checkpointed run had not yet yielded. A dataset that keeps a state of its own
(``state_dict``/``load_state_dict``) is saved and restored with it. Without torchdata the
plain ``torch.utils.data.DataLoader`` is used, and a resumed epoch skips the batches the
checkpoint counted by starting the epoch's order later.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import torch.utils.data

try:
    from torchdata.stateful_dataloader import StatefulDataLoader
except ImportError:  # the plain DataLoader, resumed by skipping batches
    StatefulDataLoader = None


def epoch_order(size: int, seed: int, epoch: int) -> list[int]:
    """The order in which epoch ``epoch`` visits the ``size`` samples (the same in every run
    with ``seed``, so that a resumed epoch continues the interrupted one)."""
    generator = torch.Generator().manual_seed(seed * 1000 + epoch)
    return torch.randperm(size, generator=generator).tolist()


def make_loader(dataset: torch.utils.data.Dataset[Any], order: Sequence[int], batch_size: int,
                workers: int, state: dict[str, Any] | None = None,
                done_batches: int = 0) -> torch.utils.data.DataLoader[Any]:
    """A loader of ``dataset`` in ``order``, ``batch_size`` samples a batch.

    Args:
        state: what :func:`loader_state` returned when the checkpoint was taken; the loader
            goes on from there.
        done_batches: without a ``state`` (a plain DataLoader keeps none), the batches of
            this epoch the checkpoint had trained on: the loader starts after them.
    """
    if state is None:
        order = order[done_batches * batch_size:]
    if StatefulDataLoader is None:
        return torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=workers,
                                           sampler=list(order))
    with warnings.catch_warnings():  # torchdata 0.11 calls a deprecated torch function
        warnings.filterwarnings("ignore", message=".*set_vital.* is deprecated")
        loader = StatefulDataLoader(dataset, batch_size=batch_size, num_workers=workers,
                                    sampler=list(order))
    if state is not None:
        loader.load_state_dict(state)
    stateful: torch.utils.data.DataLoader[Any] = loader  # torchdata has no type hints
    return stateful


def loader_state(loader: torch.utils.data.DataLoader[Any]) -> dict[str, Any] | None:
    """The loader's place in its epoch, for a checkpoint (None: it keeps none)."""
    state_dict = getattr(loader, "state_dict", None)
    return state_dict() if callable(state_dict) else None
