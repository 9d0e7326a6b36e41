"""``PfioWebDataset``: webdataset-layout shards on any pfio URL as a PyTorch
``IterableDataset``, even across ranks and resumable with torchdata's
``StatefulDataLoader``. The work is done by :mod:`pfio.integrations.shards`; this module
binds it to PyTorch's workers and distributed ranks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch.utils.data

from ..shard_cache import open_cache
from ..shards import SampleStream, expand_urls, make_decoder, read_index, shard_counts
from ..shards.epochs import IndexedEpochs
from ..shards.index import is_shard_list
from ..shards.plan import Place, epoch_order, even_targets, padding_items, reader_items
from .indexed import IndexedIterator, IndexedSource
from .placement import distributed_place, worker_place


class ShardStreamDataset(torch.utils.data.IterableDataset[Any]):
    """What the iterable datasets over shards share: an epoch, the placement of shards on
    ranks and DataLoader workers, and iterators with per-worker state for torchdata's
    ``StatefulDataLoader``. A subclass sets ``shards``, ``rank``, ``world_size`` and
    ``epoch`` and defines :meth:`_order` and :meth:`stream`."""

    shards: list[str]
    rank: int
    world_size: int
    epoch: int

    def set_epoch(self, epoch: int) -> None:
        """Use the shard order and shuffling of ``epoch``."""
        self.epoch = epoch

    def my_shards(self, epoch: int | None = None) -> list[str]:
        """The shards this rank and DataLoader worker read in ``epoch`` (default: the
        current one), in order."""
        order = self._order(self.epoch if epoch is None else epoch)
        return reader_items(order, worker_place(self.rank, self.world_size))

    def _order(self, epoch: int) -> list[str]:
        """All shards in the order of ``epoch``."""
        raise NotImplementedError

    def stream(self, place: Place, epoch: int) -> SampleStream[Any]:
        """The samples ``place`` yields in ``epoch``, as a resumable stream."""
        raise NotImplementedError

    def __iter__(self) -> EpochIterator:
        return EpochIterator(self, worker_place(self.rank, self.world_size))

    def state_dict(self) -> dict[str, Any]:
        """The dataset's own state: its epoch (the iterators hold their places)."""
        return {"epoch": self.epoch}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave."""
        self.epoch = int(state["epoch"])



class PfioWebDataset(ShardStreamDataset):
    """Samples of webdataset-layout shards (``key.jpg``, ``key.cls``, ``key.json``, ...).

    Each sample is a dict ``{"__key__": key, "__url__": shard, ext: value, ...}`` (members
    grouped as webdataset groups them), decoded by ``decode`` and then passed to
    ``transform``.

    **Over an index** (``shards`` is the directory or prefix holding ``pfio-index.json``, or
    its URL; :class:`~pfio.integrations.shards.ShardWriter` writes it,
    :func:`~pfio.integrations.shards.build_index` makes one): making the dataset costs one
    GET, whatever the world size (no LIST, no HEAD). Samples are placed one by one (see
    :mod:`pfio.integrations.shards.placement`): the epoch's order depends on the index,
    ``seed`` and the epoch only; every rank yields ``ceil(N / world_size)`` samples
    (``drop_last``: ``floor``), each sample once across ranks plus at most
    ``world_size - 1`` repeated. A rank's samples are a contiguous slice of the order, read
    in runs of consecutive samples of a shard, one ranged GET each (see
    :mod:`pfio.integrations.shards.spans`). ``shuffle=True`` shuffles the shards, then the
    samples within blocks of ``shuffle_block``: a larger block mixes samples of more shards
    but each reader holds up to ``shuffle_block`` samples in memory and reads its part of
    more shards at once. Give ``batch_size`` (the DataLoader's) so that each worker takes
    whole batches in turn and what a rank consumed is always a prefix of its samples: then
    :meth:`state_dict` with ``samples_seen`` resumes on any world size and worker count.
    ``cache_dir``/``cache_limit`` keep whole shards in a bounded node-local cache (see
    :mod:`pfio.integrations.shard_cache`).

    **Over shard URLs** (a list or a brace pattern): a tar shard is read as one stream, one
    GET for the whole object on S3.

    Placement: the epoch's shard order (shuffled by ``seed + epoch`` when ``shuffle_shards``)
    is split across ranks (shard ``i`` to rank ``i % world_size``), then each rank's shards
    across its DataLoader workers; every shard is read by exactly one worker of one rank.

    Even epochs (``even=True``, and more than one rank): every rank yields the same number
    of samples, and so does each of its workers, so every rank takes the same number of
    batches (DDP would stall otherwise). It needs each shard's sample count: from
    ``sample_counts``, else the ``.count.json`` sidecar :class:`~pfio.integrations.shards.
    ShardWriter` leaves beside each shard, else (logged) one streaming pass over each shard
    without one, made once here, in the process that makes the dataset. Worker ``w`` of
    every rank then yields exactly as many samples as the largest worker ``w`` among ranks
    holds; one that holds fewer pads by repeating samples from the start of its own shards
    (a worker without shards repeats its rank's), as ``DistributedSampler`` pads by
    repeating indices. A shard whose samples differ from its count raises ``ValueError``
    when it is read. Even epochs need at least ``world_size`` shards.

    Shuffling: with ``shuffle_buffer > 1`` each worker shuffles its samples through a buffer
    of that many (as webdataset's ``shuffle``), seeded by ``seed``, the epoch, the rank and
    the worker. Call :meth:`set_epoch` before each epoch.

    Resuming: with torchdata's ``StatefulDataLoader``, ``loader.state_dict()`` (save it with
    ``torch.save``) and ``loader.load_state_dict(state)`` on a new loader continue the epoch
    exactly where it stopped, with the same order: each worker's state is the position of
    the last sample it read, the positions of the samples in its shuffle buffer and the
    buffer's random state (:class:`~pfio.integrations.shards.SampleStream`). A resumed worker
    does not read the shards it finished; it seeks to its place in the current tar shard,
    and re-reads only the stretch its shuffle buffer spans (no buffer: one sample).

    Args:
        shards: shard URLs, or a brace pattern (``"s3://b/train-{0000..0011}.tar"``).
        decode: None (bytes), ``"pil"``, ``"numpy"``, ``"torch"``, ``"basic"``, a
            :class:`~pfio.integrations.shards.Decoder`, ``f(ext, bytes)`` or
            ``{ext: f(bytes)}`` (see :func:`~pfio.integrations.shards.make_decoder`).
        shuffle_buffer: samples in each worker's shuffle buffer (0: shard order).
        seed: seeds the shard order and the shuffle buffers.
        rank, world_size: this process's place among ranks (default: from
            ``torch.distributed`` when it is initialised, else 0 of 1).
        even: yield the same number of samples on every rank (see above).
        transform: applied to each decoded sample.
        shuffle_shards: shuffle the shard order each epoch (default: when
            ``shuffle_buffer > 1``).
        sample_counts: samples per shard (a mapping URL -> count, or counts in the order of
            the shards), for even epochs without an index or sidecars.
        shuffle: (index) shuffle shards, then samples within blocks.
        shuffle_block: (index) samples per shuffle block.
        drop_last: (index) every rank yields ``floor(N / world_size)``, nothing repeated.
        batch_size: (index) the DataLoader's batch size: workers take whole batches in
            turn (default: each worker a contiguous part of its rank's samples).
        window: (index) samples a reader fetches at a time (default ``shuffle_block``).
        cache_dir, cache_limit, predownload: (index) a node-local shard cache (see
            :mod:`pfio.integrations.shard_cache`).
    """

    def __init__(self, shards: str | Sequence[str], decode: Any = None,
                 shuffle_buffer: int = 0, seed: int = 0, rank: int | None = None,
                 world_size: int | None = None, even: bool = True,
                 transform: Callable[[Any], Any] | None = None, *,
                 shuffle_shards: bool | None = None,
                 sample_counts: Mapping[str, int] | Sequence[int] | None = None,
                 shuffle: bool = False, shuffle_block: int = 4096, drop_last: bool = False,
                 batch_size: int | None = None, window: int | None = None,
                 cache_dir: str | None = None, cache_limit: int | str | None = None,
                 predownload: int | None = None) -> None:
        self.indexed: IndexedSource | None = None
        if not is_shard_list(shards):
            self._init_indexed(str(shards), decode, shuffle_buffer, seed, rank, world_size,
                               transform, shuffle, shuffle_block, drop_last, batch_size,
                               window, cache_dir, cache_limit, predownload)
            return
        self.shards = expand_urls(shards)
        if not self.shards:
            raise ValueError("no shards given")
        make_decoder(decode)  # a wrong ``decode`` fails here, not in a worker
        self.decode = decode
        self.shuffle_buffer = shuffle_buffer
        self.seed = seed
        self.rank, self.world_size = distributed_place(rank, world_size)
        self.even = even
        self.transform = transform
        self.shuffle_shards = shuffle_buffer > 1 if shuffle_shards is None else shuffle_shards
        self.epoch = 0
        #: samples per shard (only for even epochs over several ranks)
        self.counts: dict[str, int] | None = None
        if even and self.world_size > 1:
            if len(self.shards) < self.world_size:
                raise ValueError(f"{len(self.shards)} shards cannot give {self.world_size} "
                                 "ranks even epochs: give each rank one at least, or even=False")
            found = shard_counts(self.shards, sample_counts)
            self.counts = {url: count.samples for url, count in found.items()}

    def _init_indexed(self, url: str, decode: Any, shuffle_buffer: int, seed: int,
                      rank: int | None, world_size: int | None,
                      transform: Callable[[Any], Any] | None, shuffle: bool,
                      shuffle_block: int, drop_last: bool, batch_size: int | None,
                      window: int | None, cache_dir: str | None,
                      cache_limit: int | str | None, predownload: int | None) -> None:
        if shuffle_buffer > 1:
            raise ValueError("over an index, shuffle with shuffle=True and shuffle_block "
                             "(a shuffle buffer would break exact resuming)")
        index = read_index(url)
        self.shards = [entry.url for entry in index.shards]
        self.rank, self.world_size = distributed_place(rank, world_size)
        self.seed, self.epoch = seed, 0
        self.decode, self.transform = decode, transform
        self.shuffle_buffer = 0
        decoder = make_decoder(decode)
        epochs = IndexedEpochs(index, seed, shuffle, shuffle_block, drop_last, batch_size)
        opener, ahead = open_cache(cache_dir, cache_limit, predownload, index)
        self.indexed = IndexedSource(epochs, window or shuffle_block, decoder, transform,
                                     opener, ahead)

    def __len__(self) -> int:
        """Samples this rank yields in the current epoch (over an index)."""
        if self.indexed is None:
            raise TypeError("the length of a dataset over shard URLs is not known; over an "
                            "index it is")
        source = self.indexed
        return len(source.epochs.share(self.epoch, source.history_of(self.epoch),
                                       self.rank, self.world_size))

    def my_shards(self, epoch: int | None = None) -> list[str]:
        """The shards this rank and DataLoader worker read in ``epoch`` (default: the
        current one), in the order it first needs them."""
        if self.indexed is None:
            return super().my_shards(epoch)
        epoch = self.epoch if epoch is None else epoch
        source = self.indexed
        ids = source.epochs.reader_ids(epoch, source.history_of(epoch),
                                       worker_place(self.rank, self.world_size))
        index = source.epochs.index
        return list(dict.fromkeys(index.shards[index.locate(g)[0]].url for g in ids))

    def __iter__(self) -> Any:
        if self.indexed is None:
            return super().__iter__()
        return IndexedIterator(self.indexed, worker_place(self.rank, self.world_size),
                               self.epoch)

    def state_dict(self, samples_seen: int | None = None) -> dict[str, Any]:
        """The dataset's state. Over an index, with ``samples_seen`` (the samples of this
        epoch seen by all ranks together, from its start): a small JSON-serialisable dict
        from which :meth:`load_state_dict` on a dataset of any world size and worker count
        goes on with exactly the samples not seen (see
        :mod:`pfio.integrations.shards.epochs`). Without, the epoch (and the history of a
        resumed one): what ``StatefulDataLoader`` saves beside its workers' states.

        Raises:
            ValueError: ``samples_seen`` that cannot be (more than the ranks held, or not a
                multiple of the world size).
        """
        if self.indexed is None:
            return super().state_dict()
        return self.indexed.state(self.epoch, self.world_size, samples_seen)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave (over an index: on any world size).

        Raises:
            ValueError: a state of another index, seed or shuffling.
        """
        if self.indexed is None:
            super().load_state_dict(state)
            return
        self.epoch = self.indexed.load(state)

    def _order(self, epoch: int) -> list[str]:
        return epoch_order(self.shards, self.seed, epoch, self.shuffle_shards)

    def stream(self, place: Place, epoch: int) -> SampleStream[Any]:
        """The samples ``place`` yields in ``epoch``."""
        order = self._order(epoch)
        target = None
        if self.counts is not None:
            target = even_targets(order, self.counts, place)[place.worker]
        return SampleStream(
            reader_items(order, place), padding_items(order, place), target=target,
            expected=self.counts, shuffle_buffer=self.shuffle_buffer,
            rng_seed=f"{self.seed}:{epoch}:{place.rank}:{place.worker}",
            decoder=make_decoder(self.decode), transform=self.transform)



class EpochIterator:
    """One worker's pass over its samples of an epoch, with ``state_dict`` and
    ``load_state_dict`` (what ``StatefulDataLoader`` saves and restores per worker)."""

    def __init__(self, dataset: ShardStreamDataset, place: Place) -> None:
        self._dataset = dataset
        self.place = place
        self.epoch = dataset.epoch
        self._stream = dataset.stream(place, self.epoch)

    def __iter__(self) -> EpochIterator:
        return self

    def __next__(self) -> Any:
        return next(self._stream)

    def state_dict(self) -> dict[str, Any]:
        """The epoch, this worker's place and its stream's state (plain ints and lists)."""
        place = self.place
        return {"epoch": self.epoch,
                "place": [place.rank, place.world_size, place.worker, place.num_workers],
                "stream": self._stream.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state``, before the first sample is taken.

        Raises:
            ValueError: ``state`` was saved by another rank or worker layout.
        """
        place = self.place
        mine = [place.rank, place.world_size, place.worker, place.num_workers]
        if list(state["place"]) != mine:
            raise ValueError(f"a state saved at (rank, world_size, worker, num_workers) = "
                             f"{tuple(state['place'])} cannot resume at {tuple(mine)}")
        if int(state["epoch"]) != self.epoch:
            self.epoch = int(state["epoch"])
            self._stream = self._dataset.stream(place, self.epoch)
        self._stream.load_state_dict(state["stream"])
