"""What the demo is told (its options) and what it measures (per-epoch figures)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Options:
    """What the demo does; the command-line options."""

    url: str | None = None
    epochs: int = 3
    workers: int = 4
    images: int = 3000
    batch_size: int = 64
    checkpoint_every: int = 20
    out: str = "demo-output"
    interrupt: bool = True
    seed: int = 0


@dataclass
class EpochStats:
    epoch: int
    images: int
    seconds: float
    io_seconds: float
    s3_requests: int
    cache_hit_ratio: float
    summary: str = field(repr=False)

    @property
    def images_per_second(self) -> float:
        return self.images / self.seconds if self.seconds else 0.0


class SimulatedCrash(RuntimeError):
    """Raised once in the middle of an epoch, to show resuming from the latest checkpoint."""
