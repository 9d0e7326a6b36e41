"""``pfio.integrations.torch_mixing``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.mixing`, and this one re-exports the same
objects."""

from .torch.mixing import BLOCK, STATE_FORMAT, MixedIterator, PfioMixedDataset, schedule

__all__ = ["BLOCK", "MixedIterator", "PfioMixedDataset", "STATE_FORMAT", "schedule"]
