"""PFIO 2.x's module path of :class:`~pfio.cache.readonly_file_cache.ReadOnlyFileCache`."""

from .readonly_file_cache import ReadOnlyFileCache

__all__ = ["ReadOnlyFileCache"]
