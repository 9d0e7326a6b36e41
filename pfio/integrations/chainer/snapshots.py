"""Chainer snapshots written to any pfio URL, atomically, and the latest one loaded back.

    from pfio.integrations.chainer import PfioSnapshotWriter, autoload

    writer = PfioSnapshotWriter("s3://bucket/run1/snapshots", n_retains=3)
    trainer.extend(extensions.snapshot(writer=writer), trigger=(1, "epoch"))
    autoload(trainer, "s3://bucket/run1/snapshots")   # resume from the latest snapshot
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Callable
from typing import Any

from ...api import from_url, open_url
from ...patches.snapshots import natural_key
from ...trace.redact import redact
from .compat import import_chainer

import_chainer()
from chainer.serializers import npz  # noqa: E402 - after the NumPy 2 shim
from chainer.training.extensions import snapshot_writers  # noqa: E402

logger = logging.getLogger(__name__)


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
