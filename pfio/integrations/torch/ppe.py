"""pytorch-pfn-extras (PPE): snapshots written to and resumed from any pfio URL.

    import pytorch_pfn_extras as ppe
    from pfio.integrations.torch.ppe import snapshot_writer

    writer = snapshot_writer("s3://bucket/run1/snapshots")
    manager.extend(ppe.training.extensions.snapshot(writer=writer, autoload=True, n_retains=3),
                   trigger=(1, "epoch"))

PPE writers take a filesystem object with the PFIO API; a pfio filesystem is one. Writes are
atomic (a snapshot appears whole or not at all), and ``autoload`` finds the latest snapshot by
listing the same filesystem.

PPE takes the latest snapshot (and the stale ones ``n_retains`` removes) by modification
time, breaking ties by the name as a string; S3 keeps whole seconds, so of two snapshots of
one second ``snapshot_iter_10`` would sort before ``snapshot_iter_9``. The filesystem this
writer hands PPE reports times that, between files of the same time, order by the numbers
in their names, so the latest is the latest. (With ``pfio.patch_all()``, PPE's own choice is
patched the same way, for its default writer on a URL ``out_dir`` too: see
:mod:`pfio.patches.snapshots`.)
"""

from __future__ import annotations

from typing import Any

from ...api import from_url
from ...fs.base import FS
from ...fs.stat import FileStat
from ...patches.snapshots import natural_key


def snapshot_writer(url: str, **kwargs: Any) -> Any:
    """A PPE ``SimpleWriter`` that writes snapshots under ``url`` (kwargs go to the writer)."""
    # (where the class is defined: the package's __init__ does not re-export it to mypy)
    from pytorch_pfn_extras.writing._simple_writer import SimpleWriter

    return SimpleWriter(fs=SnapshotFS(from_url(url, create=True)), out_dir="", **kwargs)


class SnapshotTime(float):
    """A modification time (a float of its value) that, compared with another of the same
    value, orders as the numbers in the files' names do (``snapshot_iter_9`` before
    ``snapshot_iter_10``)."""

    __slots__ = ("key",)
    key: list[Any]

    def __new__(cls, seconds: float, name: str) -> SnapshotTime:
        time = super().__new__(cls, seconds)
        time.key = natural_key(name)
        return time

    def _order(self, other: Any) -> tuple[Any, Any] | None:
        if isinstance(other, SnapshotTime):
            return (float(self), self.key), (float(other), other.key)
        return None

    def __eq__(self, other: Any) -> bool:
        pair = self._order(other)
        return float.__eq__(self, other) if pair is None else pair[0] == pair[1]

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __lt__(self, other: Any) -> bool:
        pair = self._order(other)
        return float.__lt__(self, other) if pair is None else pair[0] < pair[1]

    def __le__(self, other: Any) -> bool:
        return bool(self < other or self == other)

    def __gt__(self, other: Any) -> bool:
        pair = self._order(other)
        return float.__gt__(self, other) if pair is None else pair[0] > pair[1]

    def __ge__(self, other: Any) -> bool:
        return bool(self > other or self == other)

    __hash__ = float.__hash__


class SnapshotFS:
    """A pfio filesystem as PPE's writers use it, whose ``stat`` reports
    :class:`SnapshotTime` modification times; everything else is the filesystem's."""

    def __init__(self, fs: FS) -> None:
        self.fs = fs

    def stat(self, path: str) -> FileStat:
        """``fs.stat(path)`` with its ``last_modified`` a :class:`SnapshotTime`."""
        st = self.fs.stat(path)
        if st.last_modified is not None:
            st.last_modified = SnapshotTime(st.last_modified, path.rsplit("/", 1)[-1])
        return st

    def __getattr__(self, name: str) -> Any:
        if name == "fs":  # not set yet (unpickling)
            raise AttributeError(name)
        return getattr(self.fs, name)

    def __enter__(self) -> SnapshotFS:
        return self

    def __exit__(self, *exc: object) -> None:
        self.fs.close()

    def __repr__(self) -> str:
        return f"SnapshotFS({self.fs!r})"
