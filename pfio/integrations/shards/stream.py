"""The samples one reader yields in one epoch, as a resumable iterator (framework-free).

A reader reads its shards in order (slots ``0 .. len(shards) - 1``); with a ``target`` it
then repeats ``padding`` shards from the start (slots ``len(shards)``, ...) until it has
taken exactly ``target`` samples (and stops at ``target`` even inside its own shards).
Samples go through a :class:`~pfio.integrations.shards.shuffle.ShuffleBuffer`, then the
decoder, then ``transform``.

Resuming is exact, and replays as little as it can (see :meth:`SampleStream.state_dict`):
the state holds the :class:`~pfio.integrations.shards.plan.Position` of the last sample
taken from the shards and of each sample held in the shuffle buffer, and the buffer's
random state. A resumed stream starts reading at the earliest of those positions (shards
before it are not read at all; inside a tar shard it seeks to the sample), takes back the
buffered samples as it passes them, and goes on from the sample after the last one taken.
With no shuffle buffer that costs one sample read again; with one, the stretch of the
shards the buffer spans (about ``shuffle_buffer`` samples). Storing the buffered samples'
bytes in the state instead would make every checkpoint as large as the buffer.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

from .plan import Position
from .reader import Sample, iter_samples
from .shuffle import ShuffleBuffer

logger = logging.getLogger(__name__)

#: a sample as the shards' reader yields it (webdataset's dicts by default)
S = TypeVar("S")
Located = tuple[Position, S]
ReadShard = Callable[[str, int], Iterator[tuple[int, S]]]


class SampleStream(Generic[S]):
    """Samples of ``shards`` (then ``padding`` up to ``target``), shuffled, decoded and
    transformed; an iterator with ``state_dict``/``load_state_dict``.

    Args:
        shards: the reader's shards, in order.
        padding: shards repeated (cyclically) after them while fewer than ``target`` samples
            were taken; ignored without a ``target``.
        target: exactly this many samples are yielded (None: every sample of ``shards``).
        expected: sample counts by shard URL; a shard read to its end with another count
            raises ``ValueError`` (a stale count would break even epochs silently).
        shuffle_buffer: slots of the shuffle buffer (0 or 1: stream order).
        rng_seed: seeds the buffer's generator (any str or int).
        decoder: ``f(sample) -> sample``, or None.
        transform: ``f(sample) -> item``, or None.
        read: ``read(url, resume) -> (resume token, sample)`` pairs of one shard.
    """

    @overload
    def __init__(self: SampleStream[Sample], shards: Sequence[str],
                 padding: Sequence[str] = (), target: int | None = None,
                 expected: dict[str, int] | None = None, shuffle_buffer: int = 0,
                 rng_seed: Any = 0, decoder: Callable[[Sample], Any] | None = None,
                 transform: Callable[[Any], Any] | None = None) -> None: ...

    @overload
    def __init__(self, shards: Sequence[str], padding: Sequence[str] = (),
                 target: int | None = None, expected: dict[str, int] | None = None,
                 shuffle_buffer: int = 0, rng_seed: Any = 0,
                 decoder: Callable[[S], Any] | None = None,
                 transform: Callable[[Any], Any] | None = None, *,
                 read: ReadShard[S]) -> None: ...

    def __init__(self, shards: Sequence[str], padding: Sequence[str] = (),
                 target: int | None = None, expected: dict[str, int] | None = None,
                 shuffle_buffer: int = 0, rng_seed: Any = 0,
                 decoder: Callable[[Any], Any] | None = None,
                 transform: Callable[[Any], Any] | None = None,
                 read: ReadShard[Any] = iter_samples) -> None:
        self.shards = list(shards)
        self.padding = list(padding) if target is not None else []
        self.target = target
        self.expected = expected
        self.decoder = decoder
        self.transform = transform
        self._read = read
        self._buffer: ShuffleBuffer[Located[S]] = ShuffleBuffer(shuffle_buffer,
                                                                 random.Random(rng_seed))
        self._source: Generator[Located[S], None, None] | None = None
        self._last: Position | None = None  # the last sample taken from the shards
        self._taken = 0
        self._yielded = 0
        self._draining = False
        self._restore: dict[str, Any] | None = None

    # -- iteration ---------------------------------------------------------------------

    def __iter__(self) -> SampleStream[S]:
        return self

    def __next__(self) -> Any:
        if self._source is None:
            self._source = self._start()
        while not self._draining:
            if self.target is not None and self._taken >= self.target:
                self._end_source()
                break
            located = next(self._source, None)
            if located is None:
                self._end_source()
                break
            self._last = located[0]
            self._taken += 1
            out = self._buffer.push(located)
            if out is not None:
                return self._emit(out)
        if not self._buffer.items:
            raise StopIteration
        return self._emit(self._buffer.pop())

    def _end_source(self) -> None:
        self._draining = True
        if self._source is not None:
            self._source.close()

    def _emit(self, located: Located[S]) -> Any:
        self._yielded += 1
        sample = located[1]
        if self.decoder is not None:
            sample = self.decoder(sample)
        return self.transform(sample) if self.transform is not None else sample

    def _slot(self, slot: int) -> str | None:
        if slot < len(self.shards):
            return self.shards[slot]
        if not self.padding:
            return None
        return self.padding[(slot - len(self.shards)) % len(self.padding)]

    def _located(self, start: Position) -> Generator[Located[S], None, None]:
        """``(position, sample)`` from ``start`` on, slot after slot."""
        slot, index, resume = start.slot, start.sample, start.resume
        empty_slots = 0
        while True:
            url = self._slot(slot)
            if url is None:
                return
            first = index
            for token, sample in self._read(url, resume):
                yield Position(slot, index, token), sample
                index += 1
            self._check_count(url, slot, index)
            empty_slots = empty_slots + 1 if index == first == 0 else 0
            if slot >= len(self.shards) and empty_slots >= len(self.padding):
                raise ValueError(f"cannot pad to {self.target} samples: the padding shards "
                                 f"hold no samples ({self.padding[:3]})")
            slot, index, resume = slot + 1, 0, 0

    def _check_count(self, url: str, slot: int, count: int) -> None:
        expected = None if self.expected is None else self.expected.get(url)
        if expected is not None and slot < len(self.shards) and count != expected:
            raise ValueError(f"{url} holds {count} samples but its recorded count is "
                             f"{expected}: the shard changed after it was counted (index it again "
                             "with build_index, or give the right sample_counts)")

    # -- state ---------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Where the stream stands: plain ints and lists (``torch.save``-able, loadable with
        ``weights_only=True``)."""
        if self._restore is not None:
            return dict(self._restore)
        return {
            "last": None if self._last is None else self._last.to_dict(),
            "taken": self._taken,
            "yielded": self._yielded,
            "draining": self._draining,
            "buffer": [position.to_dict() for position, _ in self._buffer.items],
            "rng": self._buffer.rng_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state`` (of a stream made with the same arguments); call before
        the first ``next``."""
        if self._source is not None:
            raise RuntimeError("load_state_dict must come before the stream is iterated")
        self._restore = dict(state)

    def _start(self) -> Generator[Located[S], None, None]:
        state, self._restore = self._restore, None
        if state is None:
            return self._located(Position())
        self._taken, self._yielded = int(state["taken"]), int(state["yielded"])
        self._draining = bool(state["draining"])
        self._buffer.set_rng_state(state["rng"])
        last = None if state["last"] is None else Position.from_dict(state["last"])
        self._last = last
        held = [Position.from_dict(p) for p in state["buffer"]]
        if last is None:
            return self._located(Position())
        start = min([last, *held], key=Position.key)
        source = self._located(start)
        slots: dict[tuple[int, int], int] = {p.key(): i for i, p in enumerate(held)}
        items: list[Located[S] | None] = [None] * len(held)
        reached = False
        for position, sample in source:
            i = slots.get(position.key())
            if i is not None:
                items[i] = (position, sample)
            if position.key() >= last.key():
                reached = True
                break
        if not reached:
            raise ValueError(f"cannot resume: the shards end before the last sample taken "
                             f"({last})")
        missing = [held[i] for i, item in enumerate(items) if item is None]
        if missing:
            raise ValueError(f"cannot resume: the shards no longer hold the buffered samples "
                             f"at {missing[:3]}")
        self._buffer.items = [item for item in items if item is not None]  # (none is)
        logger.debug("resumed after %d samples taken, %d yielded, %d buffered", self._taken,
                     self._yielded, len(items))
        if self._draining:
            source.close()
        return source
