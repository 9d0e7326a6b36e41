"""What datasets need in each process (framework-free): filesystems opened lazily, and a small
thread pool that fetches items ahead of the code consuming them.

* :class:`ProcessFilesystems` pickles as its root URLs and options; each process (the main
  one, DataLoader workers made by fork, spawn or forkserver) opens the filesystems on first
  use, so a dataset pickles small and never shares a connection across processes.
* :func:`fetch_ahead` yields ``fetch(item)`` for each item in order while the next ones are
  fetched concurrently on a pool of :data:`FETCH_THREADS` threads, made on first use in each
  process; at most ``window`` results are held ahead of the consumer (bounded memory).
"""

from __future__ import annotations

import os
import posixpath
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any, TypeVar

from ..api import from_url
from ..fs.base import FS
from ..fs.resolver import descend

T = TypeVar("T")
R = TypeVar("R")

#: threads of the per-process fetch pool (``$PFIO_FETCH_THREADS``, default 8)
FETCH_THREADS = max(1, int(os.environ.get("PFIO_FETCH_THREADS", "8")))
#: results :func:`fetch_ahead` holds ahead of its consumer by default
DEFAULT_WINDOW = 2 * FETCH_THREADS

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    """In a forked child: the parent's pool threads are not here; make a new pool on use."""
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def fetch_pool() -> ThreadPoolExecutor:
    """This process's fetch pool (made on first use)."""
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(FETCH_THREADS, thread_name_prefix="pfio-fetch")
            pool = _pool
    return pool


def fetch_ahead(fetch: Callable[[T], R], items: Iterable[T],
                window: int = DEFAULT_WINDOW) -> Iterator[R]:
    """``fetch(item)`` for each of ``items``, in their order, fetched concurrently.

    Up to ``window`` items are fetched ahead of the one being consumed (on the process's
    :func:`fetch_pool`), so while the consumer works on one result (decodes an image), the
    next ones arrive. ``window`` <= 1 fetches each item when it is wanted, in this thread.
    An exception of ``fetch`` is raised when its item's turn comes; fetches not yet started
    are then cancelled (and so are they when the consumer stops early). ``fetch`` must not
    itself wait for :func:`fetch_ahead` (the pool is shared).
    """
    if window <= 1:
        yield from map(fetch, items)
        return
    pool = fetch_pool()
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(fetch, item))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


def checked_index(index: int, count: int, what: str = "items") -> int:
    """``index`` of a dataset of ``count`` items counted from the start (a negative one
    counts from the end).

    Raises:
        IndexError: out of range (the message says ``count`` and ``what``).
    """
    if not -count <= index < count:
        raise IndexError(f"index {index} out of range for {count} {what}")
    return index + count if index < 0 else index


class ProcessFilesystems:
    """The filesystems at ``roots`` (URLs), opened with ``options`` on first use in each
    process and kept for the process; pickles as the URLs and options.

    Args:
        roots: filesystem URLs (``s3://bucket/prefix``, ``/data``, ``mem://x``,
            ``s3://b/train.zip``...).
        options: options of :func:`pfio.from_url` (``endpoint=...``, ``region=...``).
    """

    def __init__(self, roots: Sequence[str], options: dict[str, Any] | None = None) -> None:
        self.roots = list(roots)
        self.options = dict(options or {})
        self._local: tuple[int, threading.Lock, dict[int, FS]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"roots": self.roots, "options": self.options, "_local": None}

    def get(self, root: int = 0) -> FS:
        """The filesystem at ``roots[root]`` in this process."""
        local = self._local
        if local is None or local[0] != os.getpid():
            local = self._local = (os.getpid(), threading.Lock(), {})
        _, lock, opened = local
        fs = opened.get(root)
        if fs is None:
            with lock:
                fs = opened.get(root)
                if fs is None:
                    fs = opened[root] = from_url(self.roots[root], **self.options)
        return fs

    def open(self, root: int, name: str) -> IO[bytes]:
        """Open ``name`` under ``roots[root]`` for reading bytes; containers named on the way
        (``train.zip/img/1.jpg``) are opened once per process and shared.

        Raises:
            FileNotFoundError: there is no such file (the message names it).
        """
        fs = self.get(root)
        parent, base = posixpath.split(name)
        if parent:
            fs, inner = descend(fs, parent)
            name = posixpath.join(inner, base) if inner else base
        return fs.open(name, "rb")

    def read(self, root: int, name: str) -> bytes:
        """The whole file ``name`` under ``roots[root]`` (one GET on S3, no HEAD)."""
        with self.open(root, name) as f:
            return f.read()


__all__ = ["DEFAULT_WINDOW", "FETCH_THREADS", "ProcessFilesystems", "checked_index",
           "fetch_ahead", "fetch_pool"]
