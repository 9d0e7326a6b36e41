"""How an epoch goes, as it goes: images/s and the time spent waiting for data."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)


class EpochProgress:
    """Counts one epoch's batches and logs a progress line every ``every`` seconds.

    Args:
        epoch: the epoch, counted from 1; ``epochs`` how many there are.
        batches: the batches of the whole epoch; ``first_batch`` the one this run starts at
            (more than 0 when the epoch resumes from a checkpoint).
        every: seconds between progress lines (0: a line after every batch).
        clock: seconds, monotonic (``time.perf_counter``).
    """

    def __init__(self, epoch: int, epochs: int, batches: int, first_batch: int = 0,
                 every: float = 5.0, clock: Callable[[], float] = time.perf_counter) -> None:
        self.epoch, self.epochs, self.batches = epoch, epochs, batches
        self.batch = first_batch
        self.every = every
        self.clock = clock
        self.images = 0
        self.correct = 0
        self.data_wait = 0.0
        self.started = self._last_line = clock()

    @property
    def seconds(self) -> float:
        """Seconds since the epoch (this run of it) started."""
        return self.clock() - self.started

    def waited(self, seconds: float) -> None:
        """The training loop waited ``seconds`` for its next batch."""
        self.data_wait += seconds

    def trained(self, images: int, correct: int, loss: float) -> None:
        """A batch of ``images`` (``correct`` of them classified right) was trained on."""
        self.batch += 1
        self.images += images
        self.correct += correct
        now = self.clock()
        if now - self._last_line >= self.every:
            self._last_line = now
            logger.info("epoch %d/%d  batch %d/%d  %s images/s  %.1f s waiting for data  "
                        "loss %.3f", self.epoch, self.epochs, self.batch, self.batches,
                        f"{self.images_per_second:,.0f}", self.data_wait, loss)

    @property
    def images_per_second(self) -> float:
        """Images trained per second so far in this run of the epoch."""
        seconds = self.seconds
        return self.images / seconds if seconds > 0 else 0.0

    @property
    def accuracy(self) -> float:
        """The share of images classified right so far."""
        return self.correct / self.images if self.images else 0.0
