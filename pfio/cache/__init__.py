"""Caches for training data.

* Index caches with the PFIO 2.x contract and file format: :class:`NaiveCache`,
  :class:`FileCache`, :class:`MultiprocessFileCache`, :class:`ReadOnlyFileCache`
  (slot ``i`` -> bytes, write once).
* :class:`ObjectCache`: a URL -> local file path cache shared by processes, bounded and
  validated against the source, for whole-file reads and path-only APIs.
* :class:`CachedFS`: a filesystem wrapper that reads through an :class:`ObjectCache`
  (``pfio.from_url(url, cache=...)``).
* :class:`HTTPCache`: an index cache kept by an HTTP server (:class:`HTTPConnector`).
* :class:`ArrayCache`: decoded NumPy arrays, read back without a copy (needs numpy).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import mmap_file_cache  # noqa: F401 - PFIO 2.x's module path, an attribute as there
from .base import Cache
from .file_cache import FileCache
from .http_cache import HTTPCache, HTTPConnector
from .multiprocess_file_cache import MultiprocessFileCache
from .naive import NaiveCache
from .readonly_file_cache import ReadOnlyFileCache

_LAZY = {
    "ObjectCache": ".object_cache",
    "CachedFS": ".cached_fs",
    "HTTPCachedFS": ".http_cached_fs",
    "ArrayCache": ".arrays",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


__all__ = ["Cache", "NaiveCache", "FileCache", "MultiprocessFileCache", "ReadOnlyFileCache",
           "HTTPCache", "HTTPConnector", "ObjectCache", "CachedFS", "HTTPCachedFS", "ArrayCache"]
