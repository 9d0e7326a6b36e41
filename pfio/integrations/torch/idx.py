"""``IDXDataset``: MNIST-format (IDX) files as a ``torch.utils.data.Dataset`` (the reader is
the framework-free :class:`pfio.integrations.idx.IDXDataset`)."""

from __future__ import annotations

import numpy as np
from torch.utils.data import Dataset

from .. import idx


class IDXDataset(idx.IDXDataset, Dataset[tuple[np.ndarray, int]]):
    """:class:`pfio.integrations.idx.IDXDataset` as a ``torch.utils.data.Dataset``.

    Items are ``(numpy array, int label)``; the default collate function of ``DataLoader``
    turns a batch of them into tensors. It pickles small, so DataLoader workers (fork, spawn
    or forkserver) each open the files again.
    """
