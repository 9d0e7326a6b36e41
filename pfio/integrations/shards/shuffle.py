"""A shuffle buffer (as webdataset's ``shuffle(bufsize)``): items are pushed in stream order;
once ``size`` are held, each push gives back one held item picked at random, and
:meth:`ShuffleBuffer.drain` gives the rest in random order at the end. Its whole state is
the held items (in their slots) and the generator's state, so a resumed buffer gives exactly
what the uninterrupted one would have given.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ShuffleBuffer(Generic[T]):
    """Shuffles a stream through ``size`` slots with ``rng`` (``size`` <= 1: no shuffling)."""

    def __init__(self, size: int, rng: random.Random) -> None:
        self.size = max(1, size)
        self.rng = rng
        self.items: list[T] = []

    def push(self, item: T) -> T | None:
        """Hold ``item``; return the item picked to go out (None while filling up)."""
        if self.size == 1:
            return item
        self.items.append(item)
        if len(self.items) < self.size:
            return None
        return self.pop()

    def drain(self) -> Iterator[T]:
        """The held items, in random order (the stream has ended)."""
        while self.items:
            yield self.pop()

    def pop(self) -> T:
        """Take one held item, picked at random."""
        items = self.items
        i = self.rng.randrange(len(items))
        items[i], items[-1] = items[-1], items[i]
        return items.pop()

    def rng_state(self) -> list[Any]:
        """The generator's state as nested lists of ints (storable by ``torch.save`` and
        loadable with ``weights_only=True``)."""
        version, internal, gauss = self.rng.getstate()
        return [version, list(internal), gauss]

    def set_rng_state(self, state: list[Any]) -> None:
        """Restore what :meth:`rng_state` gave."""
        version, internal, gauss = state
        self.rng.setstate((version, tuple(internal), gauss))
