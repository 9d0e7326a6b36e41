"""Chainer integration: an image dataset over any pfio URL, and snapshots written to any URL.

    from pfio.integrations.chainer import PfioImageDataset, PfioSnapshotWriter, autoload

    dataset = PfioImageDataset("s3://bucket/train.zip")
    writer = PfioSnapshotWriter("s3://bucket/run1/snapshots", n_retains=3)
    trainer.extend(extensions.snapshot(writer=writer), trigger=(1, "epoch"))
    autoload(trainer, "s3://bucket/run1/snapshots")   # resume from the latest snapshot

Chainer 7.8.1 needs ``numpy.sctypes``, which NumPy 2 removed; this package restores that one
attribute before importing Chainer (:mod:`pfio.integrations.chainer.compat`), and ``chainer``
here is the Chainer module so imported. The modules: ``datasets`` (:class:`PfioImageDataset`),
``snapshots`` (:class:`PfioSnapshotWriter`, :func:`autoload`), ``compat``.
"""

from __future__ import annotations

from .compat import import_chainer

chainer = import_chainer()
from .datasets import PfioImageDataset  # noqa: E402 - after the NumPy 2 shim
from .snapshots import PfioSnapshotWriter, autoload  # noqa: E402

__all__ = ["PfioImageDataset", "PfioSnapshotWriter", "autoload"]
