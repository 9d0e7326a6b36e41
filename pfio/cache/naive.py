"""``NaiveCache``: the index cache in process memory."""

from __future__ import annotations

import pickle
import threading
from contextlib import nullcontext
from typing import Any

from .base import Cache, check_length


class NaiveCache(Cache):
    """A cache of ``length`` write-once slots in a list in memory (one process).

    Slots are indexed as a list is, as in PFIO 2.x: ``-1`` is the last slot (the file
    caches take ``0 <= i < length`` only).

    Args:
        length: the number of slots.
        multithread_safe: guard the slots with a lock.
        do_pickle: store pickled bytes (so later changes to a put object do not show).
    """

    def __init__(self, length: int, multithread_safe: bool = False,
                 do_pickle: bool = False) -> None:
        check_length(length)
        self.length = length
        self.do_pickle = do_pickle
        self._multithread_safe = multithread_safe
        self._lock = threading.Lock() if multithread_safe else nullcontext()
        self.data: list[Any] = [None] * length

    def __len__(self) -> int:
        return self.length

    @property
    def multiprocess_safe(self) -> bool:
        """Always False: every process has its own copy."""
        return False

    @property
    def multithread_safe(self) -> bool:
        """As given to the constructor."""
        return self._multithread_safe

    def put(self, i: int, data: Any) -> bool:
        """Store ``data`` in slot ``i`` unless it is filled (see :meth:`Cache.put`)."""
        _check_list_index(i, self.length)
        if self.do_pickle:
            data = pickle.dumps(data)
        with self._lock:
            if self.data[i] is not None:
                return False
            self.data[i] = data
            return True

    def get(self, i: int) -> Any:
        """The data of slot ``i`` or None (see :meth:`Cache.get`)."""
        _check_list_index(i, self.length)
        data = self.data[i]
        return pickle.loads(data) if self.do_pickle and data is not None else data

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock() if self._multithread_safe else nullcontext()


def _check_list_index(i: int, length: int) -> None:
    """Raise ``IndexError`` unless ``-length <= i < length``."""
    if not -length <= i < length:
        raise IndexError(f"index {i} out of range ([{-length}, {length - 1}])")
