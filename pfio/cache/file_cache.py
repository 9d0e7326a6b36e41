"""``FileCache``: the index cache in a local file, for one process (and its threads)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .index_cache import CacheFileView, IndexFileCache
from .local_disk import check_local_disk

#: PFIO 2.x's switch: ``pfio.cache.file_cache._FORCE_LOCAL = False`` lets the file caches
#: (this one and :class:`~pfio.cache.MultiprocessFileCache`) use a directory on NFS
_FORCE_LOCAL = True


def _check_local(directory: str) -> None:
    """Raise ``ValueError`` when ``directory`` is on NFS, unless :data:`_FORCE_LOCAL` is off
    (PFIO 2.x's name)."""
    if _FORCE_LOCAL:
        check_local_disk(directory)


class FileCache(IndexFileCache):
    """A cache of ``length`` write-once slots in a temporary file under ``dir``.

    The file is ``$XDG_CACHE_HOME/pfio/pfio-cache-*`` by default (``~/.cache/pfio``) and is
    removed by :meth:`close`; :meth:`preserve` keeps it under a name and :meth:`preload`
    reads such a file, made here, by :class:`MultiprocessFileCache` or by PFIO 2.x.
    Reads take no lock. Use :class:`MultiprocessFileCache` when several processes fill
    the cache at once.

    Args:
        length: the number of slots.
        multithread_safe: let several threads ``put`` at once (a lock around writes).
        do_pickle: pickle what is put and unpickle what is got.
        dir: the directory of the cache file (a local disk: ``ValueError`` on NFS).
        cache_size_limit: bytes (file size, index included) after which the cache freezes
            and takes no more data; None or 0 for no limit.
        verbose: log the cache file's name.
        trace: accepted for PFIO 2.x code; the cache reports to :mod:`pfio.trace` whenever
            tracing is enabled.
    """

    _check_local = staticmethod(_check_local)
    _ppe_prefix = "pfio.cache.file"

    def __init__(self, length: int, multithread_safe: bool = False, do_pickle: bool = False,
                 dir: str | None = None, cache_size_limit: int | None = None,
                 verbose: bool = False, trace: bool = False) -> None:
        super().__init__(length, do_pickle, dir, cache_size_limit, verbose, trace)
        self._multithread_safe = multithread_safe

    @property
    def multiprocess_safe(self) -> bool:
        """True once frozen: the file no longer changes."""
        return self._frozen

    @property
    def multithread_safe(self) -> bool:
        """As given to the constructor."""
        return self._multithread_safe

    def _write_lock(self, view: CacheFileView) -> AbstractContextManager[Any]:
        return view.lock if self._multithread_safe else nullcontext()
