"""Webdataset-layout shards on any pfio URL, without a framework (no PyTorch import).

    from pfio.integrations.shards import ShardWriter, expand_urls, iter_samples

    with ShardWriter("s3://b/train-%06d.tar", maxcount=10000) as sink:
        for key, jpeg, label in items:
            sink.write({"__key__": key, "jpg": jpeg, "cls": label})

    for url in expand_urls("s3://b/train-{000000..000011}.tar"):
        for position, sample in iter_samples(url):   # one GET per tar shard on S3
            ...                                         # {"__key__", "__url__", "jpg", "cls"}

* :mod:`.braces`: ``{0000..0011}`` and ``{a,b}`` patterns (:func:`expand_urls`);
* :mod:`.reader`: a shard read front to back and grouped into samples as webdataset groups
  them (:func:`iter_samples`, :func:`iter_members`, :func:`split_name`);
* :mod:`.decode` / :mod:`.encode`: fields decoded / encoded by extension (:class:`Decoder`,
  :func:`make_decoder`, :func:`encode_field`);
* :mod:`.writer`: :class:`ShardWriter` (numbered shards, rolled by count and size) and
  :class:`TarShardWriter` (one shard), deterministic, published atomically;
* :mod:`.index`: ``pfio-index.json``, one file describing a dataset's shards and samples
  (the writer publishes it; :func:`build_index` makes one for other shards);
* :mod:`.counts`: per-shard sample counts (the ``.count.json`` sidecars of earlier versions);
* :mod:`.plan`: which shards each rank and worker reads, even epochs, resumable positions;
* :mod:`.stream`: :class:`SampleStream`, one reader's epoch as a resumable iterator
  (``pfio.integrations.torch.PfioWebDataset`` wraps it for PyTorch).
"""

from .braces import expand_urls
from .counts import SIDECAR_SUFFIX, ShardCount, read_sidecar, shard_counts, sidecar_url
from .decode import Decoder, make_decoder
from .encode import encode_field
from .index import INDEX_NAME, Index, ShardEntry, read_index
from .indexing import build_index
from .plan import (
    Place,
    Position,
    epoch_order,
    even_targets,
    padding_items,
    rank_items,
    reader_items,
)
from .reader import count_samples, iter_members, iter_samples, split_name
from .shuffle import ShuffleBuffer
from .stream import SampleStream
from .writer import ShardWriter, TarShardWriter

__all__ = [
    "INDEX_NAME", "SIDECAR_SUFFIX", "Decoder", "Index", "Place", "Position", "SampleStream",
    "ShardCount", "ShardEntry", "ShardWriter", "ShuffleBuffer", "TarShardWriter",
    "build_index", "count_samples", "encode_field", "epoch_order", "even_targets",
    "expand_urls", "iter_members", "iter_samples", "make_decoder", "padding_items",
    "rank_items", "read_index", "read_sidecar", "reader_items", "shard_counts",
    "sidecar_url", "split_name",
]
