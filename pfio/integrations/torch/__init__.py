"""PyTorch integration (this package needs PyTorch installed).

    from pfio.integrations.torch import PfioImageDataset, CheckpointManager

    train = PfioImageDataset("s3://bucket/train.zip", transform=to_tensor, cache="raw")
    loader = torch.utils.data.DataLoader(train, batch_size=64, num_workers=4)
    checkpoints = CheckpointManager("s3://bucket/run1/checkpoints", keep_last=3)

* :class:`PfioImageDataset`: images and labels from a directory, a zip/tar container, a list
  file or a list of URLs, on any filesystem, with optional caching;
* :class:`PfioShardDataset`: an iterable dataset reading zip/tar shards front to back, each
  shard by exactly one worker of one rank;
* :class:`PfioWebDataset`: webdataset-layout shards (``key.jpg``, ``key.cls``, ...) as
  decoded sample dicts, one GET per tar shard, even across ranks, resumable with
  torchdata's ``StatefulDataLoader``;
* :class:`PfioMixedDataset`: indexed ``PfioWebDataset`` streams mixed by weight,
  deterministic and resumable on any world size;
* :class:`PfioObjectDataset` and :class:`PfioObjectIterableDataset`: any objects under a
  prefix (``from_prefix``), with s3torchconnector's call shape: the transform gets an object
  with ``.url``, ``.key`` and ``.read()``; one GET per object, fetched ahead of the sampler;
* :class:`PfioTFRecordDataset`: TFRecord shards, one GET per shard, split across ranks and
  workers, resumable with torchdata's ``StatefulDataLoader``;
* :class:`IDXDataset`: MNIST-format (IDX) files, gzipped or not;
* :func:`save`, :func:`load` and :class:`CheckpointManager`: atomic checkpoints on any URL,
  retention and resume-from-latest.

One module per job: ``images``, ``shards``, ``webdataset`` (with ``indexed``, the indexed
reads it and ``mixing`` share), ``mixing``, ``objects``, ``tfrecord``, ``parquet`` (the
Parquet readers' datasets: :class:`~pfio.integrations.torch.parquet.ParquetRowDataset`,
:class:`~pfio.integrations.torch.parquet.ParquetBatchDataset`), ``idx``, ``placement`` (ranks
and DataLoader workers), ``checkpoints`` (with ``save_stream`` and ``stale_uploads``, which
:mod:`pfio.integrations.torch.dcp`, the ``torch.distributed.checkpoint`` storage, shares),
``ppe`` (pytorch-pfn-extras snapshots). What they read is framework-free and shared with the
TensorFlow face: :mod:`pfio.integrations.shards`, :mod:`pfio.integrations.tfrecord`,
:mod:`pfio.integrations.parquet`, :mod:`pfio.integrations.objects`,
:mod:`pfio.integrations.image_items`, :mod:`pfio.integrations.idx`. The modules' former
paths (``torch_datasets``, ``checkpoints``, ``dcp``, ``ppe``, ... under
``pfio.integrations``) re-export them.
"""

from __future__ import annotations

from .checkpoints import CheckpointManager, load, save
from .idx import IDXDataset
from .images import PfioImageDataset
from .mixing import PfioMixedDataset
from .objects import PfioObjectDataset, PfioObjectIterableDataset
from .shards import PfioShardDataset
from .tfrecord import PfioTFRecordDataset
from .webdataset import PfioWebDataset

__all__ = ["CheckpointManager", "IDXDataset", "PfioImageDataset", "PfioMixedDataset",
           "PfioObjectDataset",
           "PfioObjectIterableDataset", "PfioShardDataset", "PfioTFRecordDataset",
           "PfioWebDataset", "load", "save"]
