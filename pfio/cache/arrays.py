"""``ArrayCache``: decoded NumPy arrays in any index cache, read back without a copy.

Caching the decoded input of a network (a resized image, a spectrogram) instead of the raw
file saves the decoding on every later epoch, at the price of more bytes on disk. Each array
is stored as a small header (dtype and shape) followed by its bytes in C order, so a hit is
``np.frombuffer`` on the bytes the cache returns: no copy, no unpickling.

Example::

    cache = ArrayCache(MultiprocessFileCache(len(dataset)))

    def __getitem__(self, i):
        return cache.get_and_cache(i, lambda i: decode(self.paths[i]))
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from .base import Cache

_HEADER = struct.Struct("<4sI")
_MAGIC = b"PFNA"


def encode_array(array: np.ndarray) -> bytes:
    """The cached form of ``array``: header and C-ordered bytes.

    Raises:
        ValueError: the array holds Python objects.
    """
    array = np.asarray(array)
    if array.dtype.hasobject:
        raise ValueError("arrays of Python objects cannot be cached as bytes")
    meta = json.dumps({"dtype": array.dtype.str, "shape": list(array.shape)}).encode()
    padding = -(_HEADER.size + len(meta)) % 16  # keep the data aligned for any dtype
    meta += b" " * padding
    return _HEADER.pack(_MAGIC, len(meta)) + meta + np.ascontiguousarray(array).tobytes()


def decode_array(data: bytes | memoryview) -> np.ndarray:
    """The array stored in ``data`` (a read-only view of ``data``, not a copy).

    Raises:
        ValueError: ``data`` was not made by :func:`encode_array`.
    """
    magic, size = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise ValueError("not a cached array")
    meta = json.loads(bytes(data[_HEADER.size:_HEADER.size + size]))
    shape = tuple(int(n) for n in meta["shape"])
    return np.frombuffer(data, dtype=np.dtype(meta["dtype"]),
                         offset=_HEADER.size + size).reshape(shape)


class ArrayCache:
    """NumPy arrays in the slots of an index cache (``dtype`` and ``shape`` kept).

    Arrays returned by :meth:`get` are read-only views of the cached bytes; copy one
    (``a.copy()``) before changing it in place.

    Args:
        cache: the index cache to keep the arrays in (any :class:`pfio.cache.Cache`
            without ``do_pickle``).
    """

    def __init__(self, cache: Cache) -> None:
        if getattr(cache, "do_pickle", False):
            raise ValueError("ArrayCache stores bytes: give it a cache without do_pickle")
        self.cache = cache

    def __len__(self) -> int:
        return len(self.cache)

    def put(self, i: int, array: np.ndarray) -> bool:
        """Store ``array`` in slot ``i`` (see :meth:`pfio.cache.Cache.put`)."""
        return self.cache.put(i, encode_array(array))

    def get(self, i: int) -> np.ndarray | None:
        """The array in slot ``i``, or None on a miss."""
        data = self.cache.get(i)
        return None if data is None else decode_array(data)

    def get_and_cache(self, i: int, make: Callable[[int], np.ndarray]) -> np.ndarray:
        """The array in slot ``i``; on a miss, ``make(i)``, cached first."""
        found = self.get(i)
        if found is not None:
            return found
        array = np.asarray(make(i))
        self.put(i, array)
        return array

    def close(self) -> None:
        """Close the underlying cache."""
        self.cache.close()

    def __enter__(self) -> ArrayCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
