"""Reading dataset images by index: a filesystem opened lazily in each process, optional caching
of raw bytes or of decoded arrays in a cache shared by DataLoader workers, and batches whose
images are fetched concurrently while those already arrived are decoded (framework-free)."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import Any

from ..api import open_url
from .dataset_io import ProcessFilesystems, checked_index, fetch_ahead
from .image_items import ImageItems, decode_image

_ARRAY_HEADER = struct.Struct("<III")  # height, width, channels of a cached uint8 image


class ImageReader:
    """Bytes and decoded images of :class:`ImageItems`.

    Args:
        items: what to read.
        decoder: ``"cv2"`` (HWC uint8 RGB arrays) or ``"pil"`` (RGB PIL images).
        cache: ``None``, ``"raw"`` (cache the encoded bytes: saves the network on later epochs)
            or ``"decoded"`` (cache decoded pixels: saves decoding too, costs more disk).
        cache_dir: where the cache lives (default: pfio's cache directory).
    """

    def __init__(self, items: ImageItems, decoder: str = "cv2", cache: str | None = None,
                 cache_dir: str | None = None) -> None:
        if decoder not in ("cv2", "pil"):
            raise ValueError(f"unknown decoder {decoder!r}: use 'cv2' or 'pil'")
        if cache not in (None, "raw", "decoded"):
            raise ValueError(f"cache must be None, 'raw' or 'decoded', not {cache!r}")
        self.items = items
        self.decoder = decoder
        self.cache_kind = cache
        self._cache = _make_cache(len(items), cache_dir) if cache else None
        self._filesystems = ProcessFilesystems([items.base_url]) if items.base_url else None

    def read(self, index: int) -> bytes:
        """The encoded bytes of item ``index``."""
        path = self.items.path(index)
        if self._filesystems is None:
            with open_url(path, "rb") as f:
                data: bytes = f.read()
                return data
        return self._filesystems.read(0, path)

    def image(self, index: int) -> Any:
        """The decoded image of item ``index`` (through the cache when one is configured)."""
        return self._finish(self._fetch(index))

    def images(self, indices: Sequence[int]) -> Iterator[tuple[int, Any]]:
        """``(index, image)`` for each of ``indices`` in order (negative indices count from
        the end and come back counted from the start): what :meth:`image` gives, but the
        images' bytes (or cached pixels) are fetched a few at a time concurrently while
        those already arrived are decoded in this thread, so the storage's latency hides
        behind decoding.

        Raises:
            IndexError: an index out of range (before anything is fetched).
        """
        checked = [checked_index(index, len(self.items), "images") for index in indices]
        for index, fetched in zip(checked, fetch_ahead(self._fetch, checked), strict=True):
            yield index, self._finish(fetched)

    def _fetch(self, index: int) -> Any:
        """What a thread may fetch for item ``index``: its encoded bytes, or with the
        ``"decoded"`` cache its image (decoded once, then read from the cache)."""
        if self._cache is None:
            return self.read(index)
        if self.cache_kind == "raw":
            return self._cache.get_and_cache(index, self.read)
        array = _unpack(self._cache.get_and_cache(index, self._decoded_bytes))
        if self.decoder == "pil":
            from PIL import Image

            return Image.fromarray(array)
        return array

    def _finish(self, fetched: Any) -> Any:
        """The image of what :meth:`_fetch` gave (decoding encoded bytes)."""
        if self.cache_kind == "decoded":
            return fetched
        return decode_image(fetched, self.decoder)

    def _decoded_bytes(self, index: int) -> bytes:
        import numpy as np

        array = np.asarray(decode_image(self.read(index), self.decoder), dtype=np.uint8)
        height, width, channels = array.shape
        return _ARRAY_HEADER.pack(height, width, channels) + array.tobytes()


def _unpack(data: bytes) -> Any:
    import numpy as np

    height, width, channels = _ARRAY_HEADER.unpack_from(data)
    pixels = np.frombuffer(data, np.uint8, offset=_ARRAY_HEADER.size)
    # a writable copy: transforms and torch.from_numpy expect one
    return pixels.reshape(height, width, channels).copy()


def _make_cache(length: int, cache_dir: str | None) -> Any:
    from ..cache import MultiprocessFileCache

    return MultiprocessFileCache(length, dir=cache_dir)
