"""``pfio.integrations.dcp.writer``, kept for the code and the pickles that name it: the module
moved to :mod:`pfio.integrations.torch.dcp.writer`, and this one re-exports the same
objects."""

from ..torch.dcp.writer import PfioWriter

__all__ = ["PfioWriter"]
