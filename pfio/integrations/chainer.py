"""Chainer integration: an image dataset over any pfio URL, and snapshots written to any URL.

    from pfio.integrations.chainer import PfioImageDataset, PfioSnapshotWriter, autoload

    dataset = PfioImageDataset("s3://bucket/train.zip")
    writer = PfioSnapshotWriter("s3://bucket/run1/snapshots", n_retains=3)
    trainer.extend(extensions.snapshot(writer=writer), trigger=(1, "epoch"))
    autoload(trainer, "s3://bucket/run1/snapshots")   # resume from the latest snapshot

Chainer 7.8.1 needs ``numpy.sctypes``, which NumPy 2 removed; this module restores that one
attribute before importing Chainer (see :mod:`pfio.integrations.chainer_compat`).
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..api import from_url, open_url
from ..patches.snapshots import natural_key
from ..trace.redact import redact
from .chainer_compat import import_chainer
from .image_items import collect
from .image_reader import ImageReader

chainer = import_chainer()
from chainer.dataset.dataset_mixin import DatasetMixin  # noqa: E402 - after the NumPy 2 shim
from chainer.serializers import npz  # noqa: E402
from chainer.training.extensions import snapshot_writers  # noqa: E402

logger = logging.getLogger(__name__)


class PfioImageDataset(DatasetMixin):
    """Images and labels from a directory, a zip/tar container, a list file or a list of URLs.

    Examples are ``(image, label)`` in Chainer's convention (as ``LabeledImageDataset``): the
    image a CHW array of ``dtype`` (float32 by default, values 0-255), the label of
    ``label_dtype``. Sources and caching are those of
    :class:`pfio.integrations.torch_datasets.PfioImageDataset`.
    """

    def __init__(self, source: str | Sequence[Any], dtype: Any = np.float32,
                 label_dtype: Any = np.int32, cache: str | None = None,
                 cache_dir: str | None = None, root: str | None = None) -> None:
        self.reader = ImageReader(collect(source, root), "cv2", cache, cache_dir)
        self.dtype = dtype
        self.label_dtype = label_dtype

    def __len__(self) -> int:
        return len(self.reader.items)

    def get_example(self, i: int) -> tuple[np.ndarray, Any]:
        image = self.reader.image(i).transpose(2, 0, 1).astype(self.dtype)
        return image, np.array(self.reader.items.label(i), dtype=self.label_dtype)


class PfioSnapshotWriter(snapshot_writers.Writer):
    """A Chainer snapshot writer that writes to a pfio URL, atomically.

    Each snapshot appears whole or not at all (a crash while writing leaves the previous one
    as the latest). With ``n_retains``, only the newest ``n_retains`` snapshots are kept;
    pass it here rather than to ``extensions.snapshot``, whose own clean-up works on local
    directories only.

    Args:
        url: directory of the snapshots; ``trainer.out`` is not used.
        savefun: how to serialise (default ``chainer.serializers.save_npz``).
        n_retains: how many snapshots to keep (None: all).
    """

    def __init__(self, url: str, savefun: Callable[..., Any] | None = None,
                 n_retains: int | None = None) -> None:
        super().__init__()
        self.url = url.rstrip("/")
        self._savefun: Callable[..., Any] = savefun or npz.save_npz
        self.n_retains = n_retains
        self._written: list[str] = []

    def __call__(self, filename: str, outdir: str, target: Any) -> None:
        with open_url(posixpath.join(self.url, filename), "wb") as f:
            self._savefun(f, target)
        logger.info("snapshot written: %s/%s", redact(self.url), filename)
        self._written.append(filename)
        self._retain(filename)

    def _retain(self, latest: str) -> None:
        if not self.n_retains:
            return
        pattern = _name_pattern(latest)
        with from_url(self.url) as fs:
            names = sorted((n for n in fs.list() if pattern.match(n)), key=natural_key)
            for name in names[:-self.n_retains]:
                fs.remove(name)


def autoload(target: Any, url: str, filename: str = "snapshot_iter_{.updater.iteration}") -> \
        str | None:
    """Load the newest snapshot under ``url`` matching ``filename``'s pattern into ``target``.

    ``filename`` is the format given to ``extensions.snapshot`` (the fields in braces match any
    text). The newest is the one with the highest numbers in its name. Returns the name of the
    loaded snapshot, or None when there is none.
    """
    pattern = _format_pattern(filename)
    try:
        with from_url(url) as fs:
            names: list[str] = sorted((n for n in fs.list() if pattern.match(n)),
                                      key=natural_key)
    except FileNotFoundError:
        return None
    if not names:
        return None
    with open_url(posixpath.join(url.rstrip("/"), names[-1]), "rb") as f:
        npz.load_npz(f, target)
    logger.info("resumed from snapshot %s/%s", redact(url), names[-1])
    return names[-1]


def _format_pattern(fmt: str) -> re.Pattern[str]:
    parts = re.split(r"\{[^}]*\}", fmt)
    return re.compile(".+".join(re.escape(p) for p in parts) + "$")


def _name_pattern(name: str) -> re.Pattern[str]:
    """Names like ``name`` but for its numbers (``snapshot_iter_100`` ~ ``snapshot_iter_7``)."""
    parts = re.split(r"\d+", name)
    return re.compile(r"\d+".join(re.escape(p) for p in parts) + "$")
