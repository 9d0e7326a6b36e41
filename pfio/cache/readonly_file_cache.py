"""``ReadOnlyFileCache``: a preserved index cache file, memory-mapped, read by any process."""

from __future__ import annotations

import io
import logging
import mmap
import os
import pickle
from typing import Any

from .base import SharedCache, check_index, check_length, default_cache_dir
from .index_cache import ENTRY

logger = logging.getLogger(__name__)


class ReadOnlyFileCache(SharedCache):
    """A complete cache file (made by ``preserve`` here or in PFIO 2.x), read through a
    memory map. Nothing can be put; call :meth:`preload` before reading (until then
    ``get`` returns None).

    Args:
        length: the number of slots of the file.
        do_pickle: unpickle what is got.
        dir: the directory of the file; default ``$XDG_CACHE_HOME/pfio``.
        verbose: log what happens.
    """

    def __init__(self, length: int, do_pickle: bool = False, dir: str | None = None,
                 verbose: bool = False) -> None:
        check_length(length)
        self.length = length
        self.do_pickle = do_pickle
        self.dir = dir if dir is not None else default_cache_dir()
        self.verbose = verbose
        self.closed = True
        self._map: mmap.mmap | None = None
        self._name: str | None = None

    def __len__(self) -> int:
        return self.length

    @property
    def frozen(self) -> bool:
        """Always True."""
        return True


    def get(self, i: int) -> Any:
        """The data of slot ``i``, or None before :meth:`preload` or after :meth:`close`.

        Raises:
            IndexError: ``i`` is out of range.
        """
        mapped = self._map
        if self.closed or mapped is None:  # both or neither: closed until preloaded
            return None
        check_index(i, self.length)
        offset, size = ENTRY.unpack_from(mapped, i * ENTRY.size)
        data = mapped[offset:offset + size]
        return pickle.loads(data) if self.do_pickle and data else data

    def put(self, i: int, data: Any) -> bool:
        """Always raises ``io.UnsupportedOperation``: this cache is read-only."""
        raise io.UnsupportedOperation("read only cache")

    def preserve(self, name: str, overwrite: bool = False) -> bool:
        """Always raises ``io.UnsupportedOperation``: this cache is read-only."""
        raise io.UnsupportedOperation("read only cache")

    def preload(self, name: str) -> bool:
        """Map the cache file ``<dir>/<name>``; True on success.

        Raises:
            FileNotFoundError: there is no such file.
            RuntimeError: the file has an empty slot or an entry pointing past its end.
        """
        path = os.path.join(self.dir, name)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < self.length * ENTRY.size:
                raise RuntimeError(f"Incomplete cache file {path}: shorter than its index")
            mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        for offset, length in ENTRY.iter_unpack(mapped[:self.length * ENTRY.size]):
            if length < 0 or offset + length > size:
                mapped.close()
                raise RuntimeError(f"Incomplete cache file {path}")
        self.close()
        self._map, self._name, self.closed = mapped, name, False
        logger.debug("preloaded %s", path)
        return True

    def close(self) -> None:
        """Unmap the file."""
        if self._map is not None:
            self._map.close()
            self._map = None
        self.closed = True

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_map=None, closed=True)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._name is not None:
            self.preload(self._name)
