"""``pfio.integrations.torch_tfrecord``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.tfrecord`, and this one re-exports the same
objects."""

from .torch.tfrecord import PfioTFRecordDataset

__all__ = ["PfioTFRecordDataset"]
