"""``pfio.integrations.dcp.reader``, kept for the code and the pickles that name it: the module
moved to :mod:`pfio.integrations.torch.dcp.reader`, and this one re-exports the same
objects."""

from ..torch.dcp.reader import PfioReader, Read, plan_reads

__all__ = ["PfioReader", "Read", "plan_reads"]
