"""``pfio.integrations.dcp.storage``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.dcp.storage`, and this one re-exports the same
objects."""

from ..torch.dcp.storage import DATA_SUFFIX, PfioFileSystem, is_data_file

__all__ = ["DATA_SUFFIX", "PfioFileSystem", "is_data_file"]
