"""``pfio.integrations.dcp``, kept for the code and the pickles that name it: the package moved
to :mod:`pfio.integrations.torch.dcp`, and this one re-exports the same objects (its modules
``items``, ``prefixes``, ``reader``, ``storage`` and ``writer`` re-export theirs)."""

from ..torch.dcp import (
    HashedPrefixes,
    PfioFileSystem,
    PfioReader,
    PfioWriter,
    PrefixStrategy,
    RoundRobinPrefixes,
)

__all__ = ["HashedPrefixes", "PfioFileSystem", "PfioReader", "PfioWriter", "PrefixStrategy",
           "RoundRobinPrefixes"]
