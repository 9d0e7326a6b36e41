"""``WorkerPool``: the background threads of an S3 connection (read-ahead, part uploads).

It is a small ``concurrent.futures`` executor (``submit`` returns a
:class:`concurrent.futures.Future`) whose threads are daemons and which refuses work only
once pfio itself has shut it down. ``ThreadPoolExecutor`` refuses new work as soon as the
interpreter starts to exit (``cannot schedule new futures after interpreter shutdown``),
before Python joins the non-daemon threads, so a save running in such a thread (a
background checkpoint) could not send its next part and was lost. Here the pool keeps
serving it: the interpreter waits for the non-daemon thread that uses the pool, and the
pool's daemon threads end with the process.

Threads are started when work arrives and none is idle, up to ``max_workers``; they stop
when the pool is shut down or dropped.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
#: a call for a thread of the pool (None: a thread is to stop)
_Work = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]] | None


class WorkerPool:
    """Up to ``max_workers`` daemon threads named ``{name}_{i}`` running submitted calls."""

    def __init__(self, max_workers: int, name: str) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[_Work] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closed = False
        # a pool dropped without shutdown() still stops its threads
        self._finalizer = weakref.finalize(self, _stop, self._queue, self._threads)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` on a thread of the pool.

        Raises:
            RuntimeError: the pool was shut down.
        """
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._queue.put((future, fn, args, kwargs))
            if not self._idle.acquire(blocking=False) and len(self._threads) < self._max:
                thread = threading.Thread(target=_work, args=(self._queue, self._idle),
                                          name=f"{self._name}_{len(self._threads)}",
                                          daemon=True)
                thread.start()
                self._threads.append(thread)
        return future

    def shutdown(self, wait: bool = True) -> None:
        """Refuse new work, let the threads finish what was submitted and stop them;
        ``wait`` joins them."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        self._finalizer()
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()


def _stop(work: queue.SimpleQueue[_Work], threads: list[threading.Thread]) -> None:
    for _ in threads:
        work.put(None)


def _work(work: queue.SimpleQueue[_Work], idle: threading.Semaphore) -> None:
    while True:
        item = work.get()
        if item is None:
            return
        future, fn, args, kwargs = item
        del item
        if future.set_running_or_notify_cancel():
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to the future's caller
                future.set_exception(exc)
                del exc
            else:
                future.set_result(result)
                del result
        del future, fn, args, kwargs
        idle.release()
