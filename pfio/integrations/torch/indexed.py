"""The index path of ``PfioWebDataset``: an epoch's samples placed one by one over ranks
and DataLoader workers, read in spans, resumable on any world size. The placement is
:mod:`pfio.integrations.shards.epochs`; the reads :mod:`pfio.integrations.shards.spans`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..shard_cache import Progress
from ..shards.epochs import IndexedEpochs
from ..shards.placement import Segment
from ..shards.plan import Place
from ..shards.spans import OPEN_SHARDS, Opener, SpanReader, open_shard


class IndexedSource:
    """What an indexed dataset needs to make its readers' iterators: the placement, the
    history of the current epoch (when it was resumed), and how shards are opened."""

    def __init__(self, epochs: IndexedEpochs, window: int,
                 decoder: Callable[[Any], Any] | None,
                 transform: Callable[[Any], Any] | None, opener: Opener = open_shard,
                 ahead: Callable[[list[int], int], Progress] | None = None) -> None:
        self.epochs = epochs
        self.window = window
        self.decoder = decoder
        self.transform = transform
        self.opener = opener
        self.ahead = ahead
        self.history: list[Segment] = []
        self.history_epoch = -1

    def reader(self) -> SpanReader:
        """A reader of the index's samples (shards from the cache, when there is one)."""
        keep_open = OPEN_SHARDS if self.opener is open_shard else 0
        return SpanReader(self.epochs.index, self.window, opener=self.opener,
                          keep_open=keep_open)

    def history_of(self, epoch: int) -> list[Segment]:
        """The resume history of ``epoch`` (empty unless it was resumed)."""
        return self.history if epoch == self.history_epoch else []

    def state(self, epoch: int, world_size: int, samples_seen: int | None) -> dict[str, Any]:
        """See ``PfioWebDataset.state_dict``."""
        return self.epochs.state(epoch, self.history_of(epoch), world_size, samples_seen)

    def load(self, state: dict[str, Any]) -> int:
        """Take ``state``; return its epoch."""
        epoch, history = self.epochs.check(state)
        self.history, self.history_epoch = history, epoch
        return epoch


class IndexedIterator:
    """One reader's samples of an epoch; its ``state_dict`` (what ``StatefulDataLoader``
    saves per worker) is the number of samples it yielded."""

    def __init__(self, source: IndexedSource, place: Place, epoch: int) -> None:
        self._source = source
        self.place = place
        self.epoch = epoch
        self._ids = source.epochs.reader_ids(epoch, source.history_of(epoch), place)
        self._yielded = 0
        self._samples: Any = None
        self._progress: Progress | None = None

    def __iter__(self) -> IndexedIterator:
        return self

    def __next__(self) -> Any:
        if self._samples is None:
            source = self._source
            todo = self._ids[self._yielded:]
            if source.ahead is not None:
                self._progress = source.ahead(todo, self.place.worker)
            reader = source.reader()
            self._samples = reader.read(todo)
        try:
            _, sample = next(self._samples)
        except StopIteration:
            if self._progress is not None:
                self._progress.finish()
            raise
        self._yielded += 1
        if self._progress is not None:
            self._progress.advance()
        if self._source.decoder is not None:
            sample = self._source.decoder(sample)
        transform = self._source.transform
        return transform(sample) if transform is not None else sample

    def __del__(self) -> None:
        if self._progress is not None:
            self._progress.finish()  # an abandoned epoch stops its predownload thread

    def state_dict(self) -> dict[str, Any]:
        """The epoch, this reader's place and the samples it yielded."""
        place = self.place
        return {"epoch": self.epoch,
                "place": [place.rank, place.world_size, place.worker, place.num_workers],
                "yielded": self._yielded}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state``, before the first sample is taken.

        Raises:
            ValueError: ``state`` was saved by another rank or worker layout (resume on
                another layout with the dataset's ``state_dict(samples_seen)``).
        """
        place = self.place
        mine = [place.rank, place.world_size, place.worker, place.num_workers]
        if list(state["place"]) != mine:
            raise ValueError(f"a state saved at (rank, world_size, worker, num_workers) = "
                             f"{tuple(state['place'])} cannot resume at {tuple(mine)}: "
                             "use the dataset's state_dict(samples_seen) to resume on "
                             "another layout")
        if self._samples is not None:
            raise RuntimeError("load_state_dict must come before the first sample")
        if int(state["epoch"]) != self.epoch:
            self.epoch = int(state["epoch"])
            self._ids = self._source.epochs.reader_ids(
                self.epoch, self._source.history_of(self.epoch), place)
        self._yielded = int(state["yielded"])
