"""The index-cache interface shared by every cache class (the PFIO 2.x ``Cache`` contract).

A cache holds ``length`` slots addressed by an integer ``i`` in ``[0, length)``. Each slot is
written at most once (``put`` never overwrites) and read any number of times (``get``).
"""

from __future__ import annotations

import abc
import os
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from ..trace import hook
from ..trace.ppe import Profilable


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/pfio``, or ``~/.cache/pfio`` when that variable is unset (as PFIO 2.x)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pfio")


def check_index(i: int, length: int) -> None:
    """Raise ``IndexError`` unless ``0 <= i < length`` (negative indices are not wrapped)."""
    if not 0 <= i < length:
        raise IndexError(f"index {i} out of range ([0, {length - 1}])")


def check_length(length: int) -> None:
    """Raise ``ValueError`` unless ``0 < length < 2**64``."""
    if not 0 < length < 2 ** 64:
        raise ValueError("length has to be between 0 and 2^64")


def report(name: str, hit: bool, nbytes: int, start: float) -> None:
    """Report one cache look-up to the tracer (call only when ``hook.ENABLED``)."""
    hook.record_cache(name, hit, nbytes, time.perf_counter() - start)


class Cache(Profilable, abc.ABC):
    """An array of ``length`` write-once byte slots.

    Subclasses implement ``__len__``, ``put``, ``get`` and the two safety properties.
    Caches are context managers: leaving the ``with`` block calls :meth:`close`. A cache
    made with ``trace=True`` (PFIO 2.x's option) records its ``put`` and ``get`` in
    pytorch-pfn-extras' profiler under PFIO 2.x's names (see :mod:`pfio.trace.ppe`).
    """

    _ppe_operations = {"put": "put", "get": "get"}

    @abc.abstractmethod
    def __len__(self) -> int:
        """The number of slots."""

    @property
    @abc.abstractmethod
    def multiprocess_safe(self) -> bool:
        """True when several processes may use this cache at once."""

    @property
    @abc.abstractmethod
    def multithread_safe(self) -> bool:
        """True when several threads may use this cache at once."""

    @abc.abstractmethod
    def put(self, i: int, data: Any) -> bool:
        """Store ``data`` in slot ``i``; False when the slot is already filled or the cache
        takes no more data (frozen, closed, full disk). Slots are never overwritten.

        Raises:
            IndexError: ``i`` is negative or ``>= len(self)``.
        """

    @abc.abstractmethod
    def get(self, i: int) -> Any:
        """The data in slot ``i``, or None when the slot is empty.

        Raises:
            IndexError: ``i`` is negative or ``>= len(self)``.
        """

    def get_and_cache(self, i: int, backend_get: Callable[[int], Any]) -> Any:
        """The data in slot ``i``; on a miss, ``backend_get(i)``, stored in the cache first."""
        data = self.get(i)
        if data is None:
            data = backend_get(i)
            self.put(i, data)
        return data

    def close(self) -> None:  # noqa: B027 - an in-memory cache holds nothing to release
        """Release the cache's resources. Closing twice is harmless."""

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class SharedCache(Cache):
    """A cache that any thread of any process may use at once (both safety properties
    are True); subclasses say why in their documentation."""

    @property
    def multiprocess_safe(self) -> bool:
        """Always True."""
        return True

    @property
    def multithread_safe(self) -> bool:
        """Always True."""
        return True
