"""``pfio.integrations.dcp.items``, kept for the code and the pickles that name it: the module
moved to :mod:`pfio.integrations.torch.dcp.items`, and this one re-exports the same objects."""

from ..torch.dcp.items import Items, Layout, ViewFile, copy_into, layout_of

__all__ = ["Items", "Layout", "ViewFile", "copy_into", "layout_of"]
