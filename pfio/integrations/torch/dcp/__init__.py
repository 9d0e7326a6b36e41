"""``torch.distributed.checkpoint`` (DCP) storage over any pfio URL.

    import torch.distributed.checkpoint as dcp
    from pfio.integrations.torch.dcp import PfioWriter, PfioReader

    dcp.save(state_dict, storage_writer=PfioWriter("s3://bucket/run1/step-100"))
    dcp.load(state_dict, storage_reader=PfioReader("s3://bucket/run1/step-100"))

Checkpoints are atomic on every backend, overwrites included
(:mod:`pfio.integrations.torch.dcp.writer`); loads read each file's items in offset order with
few large ranged reads in parallel, and a partial load reads only what it needs
(:mod:`pfio.integrations.torch.dcp.reader`); ``PfioWriter(prefix_strategy=...)`` spreads the data
files over key prefixes (:mod:`pfio.integrations.torch.dcp.prefixes`).
"""

from .prefixes import HashedPrefixes, PrefixStrategy, RoundRobinPrefixes
from .reader import PfioReader
from .storage import PfioFileSystem
from .writer import PfioWriter

__all__ = ["PfioWriter", "PfioReader", "PfioFileSystem", "PrefixStrategy",
           "RoundRobinPrefixes", "HashedPrefixes"]
