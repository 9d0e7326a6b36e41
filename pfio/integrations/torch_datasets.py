"""``pfio.integrations.torch_datasets``, kept for the code and the pickles that name it: the
module was split into :mod:`pfio.integrations.torch.images`,
:mod:`pfio.integrations.torch.shards` and :mod:`pfio.integrations.torch.placement`, and this
one re-exports the same objects."""

from .torch.images import PfioImageDataset
from .torch.placement import distributed_place, worker_place
from .torch.shards import PfioShardDataset

__all__ = ["PfioImageDataset", "PfioShardDataset", "distributed_place", "worker_place"]
