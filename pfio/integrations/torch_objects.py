"""``pfio.integrations.torch_objects``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.objects`, and this one re-exports the same
objects."""

from .torch.objects import PfioObjectDataset, PfioObjectIterableDataset, Transform, identity

__all__ = ["PfioObjectDataset", "PfioObjectIterableDataset", "Transform", "identity"]
