"""What the demo is told (its options) and what it measures (per-epoch figures)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def default_workers() -> int:
    """DataLoader workers: 4, or fewer on a machine with fewer cores."""
    return min(4, os.cpu_count() or 1)


@dataclass
class Options:
    """What the demo does; the command-line options."""

    url: str | None = None
    epochs: int = 3
    workers: int = field(default_factory=default_workers)
    images: int = 3000
    batch_size: int = 64
    checkpoint_every: int = 20
    out: str = "demo-output"
    interrupt: bool = True
    seed: int = 0
    #: seconds between progress lines within an epoch (0: after every batch)
    progress_every: float = 5.0


@dataclass
class EpochStats:
    """What one epoch did.

    ``images`` and ``seconds`` count this run of the epoch only: a resumed epoch starts
    where its checkpoint left it, after ``resumed_after`` images (None: not resumed).
    ``data_wait_seconds`` is how long the training loop waited for its batches (the time
    in ``next()`` on the loader); ``io_seconds`` the time pfio spent opening and reading,
    summed over the DataLoader's workers.
    """

    epoch: int
    images: int
    seconds: float
    data_wait_seconds: float
    io_seconds: float
    s3_requests: int
    cache_hit_ratio: float
    resumed_after: int | None = None
    summary: str = field(default="", repr=False)

    @property
    def images_per_second(self) -> float:
        """Images trained per second of the epoch."""
        return self.images / self.seconds if self.seconds else 0.0


class SimulatedCrash(RuntimeError):
    """Raised once in the middle of an epoch, to show resuming from the latest checkpoint."""
