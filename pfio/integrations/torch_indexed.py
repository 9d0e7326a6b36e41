"""``pfio.integrations.torch_indexed``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.indexed`, and this one re-exports the same
objects."""

from .torch.indexed import IndexedIterator, IndexedSource

__all__ = ["IndexedIterator", "IndexedSource"]
