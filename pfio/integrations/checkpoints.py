"""``pfio.integrations.checkpoints``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.checkpoints`, and this one re-exports the same
objects."""

from .torch.checkpoints import CheckpointManager, load, save

__all__ = ["CheckpointManager", "load", "save"]
