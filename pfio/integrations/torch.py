"""PyTorch integration (this module needs PyTorch installed).

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
  retention and resume-from-latest; :mod:`pfio.integrations.dcp` has
  ``torch.distributed.checkpoint`` storage.
"""

from __future__ import annotations

import numpy as np
from torch.utils.data import Dataset

from . import idx
from .checkpoints import CheckpointManager, load, save
from .torch_datasets import PfioImageDataset, PfioShardDataset
from .torch_mixing import PfioMixedDataset
from .torch_objects import PfioObjectDataset, PfioObjectIterableDataset
from .torch_tfrecord import PfioTFRecordDataset
from .torch_webdataset import PfioWebDataset


class IDXDataset(idx.IDXDataset, Dataset[tuple[np.ndarray, int]]):
    """:class:`pfio.integrations.idx.IDXDataset` as a ``torch.utils.data.Dataset``.

    Items are ``(numpy array, int label)``; the default collate function of ``DataLoader``
    turns a batch of them into tensors. It pickles small, so DataLoader workers (fork, spawn
    or forkserver) each open the files again.
    """


__all__ = ["CheckpointManager", "IDXDataset", "PfioImageDataset", "PfioMixedDataset",
           "PfioObjectDataset",
           "PfioObjectIterableDataset", "PfioShardDataset", "PfioTFRecordDataset",
           "PfioWebDataset", "load", "save"]
