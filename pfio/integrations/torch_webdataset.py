"""``pfio.integrations.torch_webdataset``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.webdataset`, and this one re-exports the same
objects."""

from .torch.webdataset import EpochIterator, PfioWebDataset, ShardStreamDataset

__all__ = ["EpochIterator", "PfioWebDataset", "ShardStreamDataset"]
