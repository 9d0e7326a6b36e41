"""``pfio.integrations.ppe``, kept for the code and the pickles that name it: the module moved
to :mod:`pfio.integrations.torch.ppe`, and this one re-exports the same objects."""

from .torch.ppe import SnapshotFS, SnapshotTime, snapshot_writer

__all__ = ["SnapshotFS", "SnapshotTime", "snapshot_writer"]
