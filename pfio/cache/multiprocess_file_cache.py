"""``MultiprocessFileCache``: the index cache in a local file, filled by many processes."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .base import SharedCache
from .file_cache import _check_local
from .index_cache import CacheFileView, IndexFileCache


class MultiprocessFileCache(SharedCache, IndexFileCache):
    """A cache of ``length`` write-once slots in one local file shared by processes.

    Create it in the main process and hand it to workers (a DataLoader's dataset holds it;
    it is pickled or inherited by fork): every process reads and fills the same file.
    Writers exclude each other with ``flock``; a hit takes no lock at all. Only the
    creating process may :meth:`preserve` or :meth:`preload`, and its :meth:`close` removes
    the temporary file. Same file format as PFIO 2.x: see :mod:`pfio.cache.index_cache`.

    Args:
        length: the number of slots.
        do_pickle: pickle what is put and unpickle what is got.
        dir: the directory of the cache file (a local disk: ``ValueError`` on NFS); default
            ``$XDG_CACHE_HOME/pfio``.
        cache_size_limit: bytes (file size, index included) after which the cache freezes
            and takes no more data; None or 0 for no limit.
        verbose: log the cache file's name.
        trace: accepted for PFIO 2.x code; the cache reports to :mod:`pfio.trace` whenever
            tracing is enabled.
    """

    _trace_name = "multiprocess_file"
    _check_local = staticmethod(_check_local)  # PFIO 2.x's file_cache._FORCE_LOCAL applies
    _ppe_prefix = "pfio.cache.multiprocessfile"

    def __init__(self, length: int, do_pickle: bool = False, dir: str | None = None,
                 cache_size_limit: int | None = None, verbose: bool = False,
                 trace: bool = False) -> None:
        super().__init__(length, do_pickle, dir, cache_size_limit, verbose, trace)


    def preload(self, name: str) -> bool:
        """See :meth:`IndexFileCache.preload`.

        Raises:
            RuntimeError: called in a worker process (only the creating process may).
        """
        self._check_owner("preload")
        return super().preload(name)

    @contextmanager
    def _write_lock(self, view: CacheFileView) -> Iterator[Any]:
        # flock excludes other processes; the thread lock other threads of this process,
        # which share the descriptor (and so the flock)
        with view.lock:
            fcntl.flock(view.fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(view.fd, fcntl.LOCK_UN)
