"""``pfio.integrations.dcp.prefixes``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.dcp.prefixes`, and this one re-exports the same
objects."""

from ..torch.dcp.prefixes import HashedPrefixes, PrefixStrategy, RoundRobinPrefixes, strategy

__all__ = ["HashedPrefixes", "PrefixStrategy", "RoundRobinPrefixes", "strategy"]
