"""``pfio.v2.http_cache``: :class:`HTTPCachedFS`, a filesystem read through an HTTP cache,
and the :class:`HTTPConnector` that talks to the cache server (as PFIO 2.10 exported it)."""

from ..cache.http_cache import HTTPConnector
from ..cache.http_cached_fs import HTTPCachedFS

__all__ = ["HTTPCachedFS", "HTTPConnector"]
