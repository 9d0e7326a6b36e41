"""``pfio.v2.http_cache``: :class:`HTTPCachedFS`, a filesystem read through an HTTP cache."""

from ..cache.http_cached_fs import HTTPCachedFS

__all__ = ["HTTPCachedFS"]
