"""``PfioTFRecordDataset``: TFRecord shards on any pfio URL as a PyTorch ``IterableDataset``,
split across ranks and DataLoader workers, resumable with torchdata's
``StatefulDataLoader``. Records are read by :mod:`pfio.integrations.tfrecord`; placement,
shuffling and resume positions are :mod:`pfio.integrations.shards`'."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..shards import SampleStream, expand_urls
from ..shards.plan import Place, epoch_order, reader_items
from .placement import distributed_place
from .webdataset import ShardStreamDataset


class PfioTFRecordDataset(ShardStreamDataset):
    """The records of TFRecord files (shards), parsed and transformed.

        dataset = PfioTFRecordDataset("s3://b/train-{00000..00127}.tfrecord",
                                      parse={"image": "bytes", "label": "int64"},
                                      shuffle_buffer=1000)
        loader = DataLoader(dataset, batch_size=64, num_workers=8)

    Each shard is read front to back by exactly one DataLoader worker of one rank (one GET
    per shard on S3; see :mod:`pfio.integrations.shards.plan`): the epoch's shard order
    (shuffled with ``seed + epoch`` when ``shuffle_buffer > 1``) is split across ranks
    (shard ``i`` to rank ``i % world_size``), then each rank's shards across its workers.
    Ranks are not evened out: with shards of unequal sizes, ranks may yield different
    numbers of records (use as many shards of equal size per rank for DDP).

    With ``shuffle_buffer > 1`` each worker shuffles its records through a buffer of that
    many, seeded by ``seed``, the epoch, the rank and the worker. Call :meth:`set_epoch`
    before each epoch.

    Resuming: with torchdata's ``StatefulDataLoader``, ``loader.state_dict()`` and
    ``loader.load_state_dict(state)`` on a new loader continue the epoch where it stopped:
    a worker's state is the byte offset of its last record, the offsets of the records in
    its shuffle buffer and the buffer's random state
    (:class:`~pfio.integrations.shards.SampleStream`); a resumed worker skips the shards it
    finished and seeks inside the current one (decompressing up to the place in a
    compressed shard).

    Args:
        shards: shard URLs, or a brace pattern (``"s3://b/train-{0000..0127}.tfrecord"``).
        parse: None (records as ``bytes``), a features spec for
            :func:`~pfio.integrations.tfrecord.parse_example` (a dict), ``"example"`` (every
            feature of each ``tf.train.Example``), or ``f(bytes) -> item``.
        transform: applied to each parsed record.
        compression: of every shard: None, ``"gzip"``, ``"zlib"`` or ``"infer"`` (by each
            shard's name).
        shuffle_buffer: records in each worker's shuffle buffer (0: file order).
        seed: seeds the shard order and the shuffle buffers.
        rank, world_size: this process's place among ranks (default: from
            ``torch.distributed`` when it is initialised, else 0 of 1).
        verify: check every record's CRCs.
        fs_options: options of :func:`pfio.from_url` for the shards.

    Raises:
        ValueError: no shards, a malformed pattern, an unknown compression or a malformed
            features spec (here, not in a worker).
    """

    def __init__(self, shards: str | Sequence[str],
                 parse: Mapping[str, Any] | str | Callable[[bytes], Any] | None = None,
                 transform: Callable[[Any], Any] | None = None,
                 compression: str | None = None, shuffle_buffer: int = 0, seed: int = 0,
                 rank: int | None = None, world_size: int | None = None, *,
                 verify: bool = True, **fs_options: Any) -> None:
        self.shards = expand_urls(shards)
        if not self.shards:
            raise ValueError("no shards given")
        from ..tfrecord import compression_of  # needs google-crc32c: not on importing the package

        for url in self.shards:
            compression_of(url, compression)  # an unknown one fails here, not in a worker
        self.parse = parse
        self._decoder = _decoder(parse)
        self.transform = transform
        self.compression = compression
        self.shuffle_buffer = shuffle_buffer
        self.seed = seed
        self.rank, self.world_size = distributed_place(rank, world_size)
        self.verify = verify
        self.fs_options = fs_options
        self.epoch = 0

    def _order(self, epoch: int) -> list[str]:
        return epoch_order(self.shards, self.seed, epoch, self.shuffle_buffer > 1)

    def stream(self, place: Place, epoch: int) -> SampleStream[bytes]:
        """The records ``place`` yields in ``epoch``, as a resumable stream."""
        order = self._order(epoch)
        return SampleStream(
            reader_items(order, place), shuffle_buffer=self.shuffle_buffer,
            rng_seed=f"{self.seed}:{epoch}:{place.rank}:{place.worker}",
            decoder=self._decoder, transform=self.transform,
            read=functools.partial(_read_shard, self.compression, self.verify,
                                   self.fs_options))



def _decoder(parse: Any) -> Callable[[bytes], Any] | None:
    """The function applied to each record for ``parse``."""
    if parse is None or callable(parse):
        given: Callable[[bytes], Any] | None = parse
        return given
    from ..tfrecord.example import check_features, parse_example

    if parse == "example":
        return parse_example
    if isinstance(parse, Mapping):
        check_features(parse)
        return functools.partial(parse_example, features=dict(parse))
    raise ValueError(f"parse must be None, a features spec (dict), 'example' or a "
                     f"callable, got {parse!r}")


def _read_shard(compression: str | None, verify: bool, fs_options: dict[str, Any], url: str,
                resume: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, record)`` of the shard at ``url`` from byte offset ``resume``."""
    from ..tfrecord import iter_records_with_offsets

    return iter_records_with_offsets(url, verify, compression, resume, **fs_options)
