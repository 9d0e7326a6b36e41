"""Reading dataset images by index: a filesystem opened lazily in each process, optional caching
of raw bytes or of decoded arrays in a cache shared by DataLoader workers (framework-free)."""

from __future__ import annotations

import os
import struct
from typing import Any

from ..api import from_url, open_url
from ..fs.base import FS
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
        self._fs: FS | None = None
        self._pid = -1

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_fs=None, _pid=-1)
        return state

    def _filesystem(self) -> FS:
        if self._fs is None or self._pid != os.getpid():
            self._fs = from_url(self.items.base_url)
            self._pid = os.getpid()
        return self._fs

    def read(self, index: int) -> bytes:
        """The encoded bytes of item ``index``."""
        path = self.items.path(index)
        if not self.items.base_url:
            with open_url(path, "rb") as f:
                return f.read()
        with self._filesystem().open(path, "rb") as f:
            return f.read()

    def image(self, index: int) -> Any:
        """The decoded image of item ``index`` (through the cache when one is configured)."""
        if self._cache is None:
            return decode_image(self.read(index), self.decoder)
        if self.cache_kind == "raw":
            data = self._cache.get_and_cache(index, self.read)
            return decode_image(data, self.decoder)
        array = _unpack(self._cache.get_and_cache(index, self._decoded_bytes))
        if self.decoder == "pil":
            from PIL import Image

            return Image.fromarray(array)
        return array

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
