"""``pfio.integrations.save_stream``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.save_stream`, and this one re-exports the same
objects."""

from .torch.save_stream import SaveDiscarded, SaveStream

__all__ = ["SaveDiscarded", "SaveStream"]
