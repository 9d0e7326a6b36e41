"""The ``background`` strategy of the read-ahead policy (see :mod:`pfio.fs.readahead`)."""

from __future__ import annotations

import errno
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any, Protocol, TypeVar

from .policy import Fetch, FetchInto, Sequential

T = TypeVar("T")


class Pool(Protocol):
    """What fetches ahead: a ``concurrent.futures`` executor, or S3's worker pool."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` in the pool; ``RuntimeError`` once it is shut down."""


class Background(Sequential):
    """The ``background`` strategy (see the module documentation): memory stays below
    ``(depth + 1) * limit`` held and in flight.

    Args:
        executor: the pool that fetches ahead (asked at each use: it may change after a
            fork); once it is shut down, reads go on without read-ahead.
        depth: blocks kept in flight.
        first, limit, fetch_into, name: as for :class:`Sequential` (``limit`` is the block).
    """

    strategy = "background"

    def __init__(self, fetch: Fetch, size: int, *, executor: Callable[[], Pool],
                 depth: int = 3, first: int = 64 << 10, limit: int = 16 << 20,
                 fetch_into: FetchInto | None = None, name: str = "") -> None:
        super().__init__(fetch, size, first=first, limit=limit, fetch_into=fetch_into,
                         name=name)
        self.depth = depth
        self._executor = executor
        self._ahead: dict[int, Future[memoryview]] = {}
        self._ahead_end = 0
        self._spares: list[bytearray] = []  # blocks to receive fetches into again

    def in_flight(self) -> list[Future[memoryview]]:
        """The blocks being fetched ahead (or fetched and not read yet)."""
        return list(self._ahead.values())

    def reads_on(self, pos: int) -> bool:
        return pos in self._ahead or super().reads_on(pos)

    def direct_ok(self, pos: int, size: int) -> bool:
        return size >= 2 * self.limit and pos not in self._ahead

    def spare(self, size: int) -> bytearray:
        """A buffer of ``size`` bytes to fill: a block read to its end, when it is one."""
        if size == self.limit and self._spares:
            return self._spares.pop()
        return bytearray(size)

    def fill(self, pos: int, wanted: int) -> int:
        future = self._ahead.pop(pos, None)
        if future is not None:
            n = self.hold(pos, future.result())
        elif self.reads_on(pos):  # fetches grow on a sequential run, up to a block
            n = self.hold(pos, self._fetch_new(pos, pos + self.window()))
        else:
            self.drop()
            return self.hold(pos, self._fetch_new(pos, pos + max(wanted, self.first)))
        if future is not None or n >= self.limit:
            self._schedule(pos + n)
        return n

    def direct(self, pos: int, target: memoryview) -> int:
        """Fetch ``target``'s bytes as concurrent blocks. When one fails, the others are
        cancelled or awaited first: nothing writes into ``target`` once this has ended."""
        self.drop()
        block = self.limit
        futures: list[Future[memoryview]] = []
        try:
            for i in range(0, len(target), block):
                stop = min(i + block, len(target))
                futures.append(self._submit(pos + i, pos + stop, target[i:stop]))
            done = sum(len(future.result()) for future in futures)
        except BaseException:
            for future in futures:
                future.cancel()
            wait(futures)
            futures.clear()  # (their results hold views of the caller's buffer)
            raise
        if done != len(target):
            raise OSError(errno.EIO, f"object shrank while being read at byte {pos}",
                          self.name)
        return done

    def drop(self) -> None:
        for future in self._ahead.values():
            future.cancel()
        self._ahead.clear()
        self._ahead_end = 0

    def close(self) -> None:
        super().close()
        with self._state:
            self._spares = []

    def forget_inherited(self, keep_buffer: bool) -> None:
        super().forget_inherited(keep_buffer)
        self._ahead, self._ahead_end = {}, 0
        if not keep_buffer:
            self._spares = []

    def _recycle(self, old: memoryview) -> None:
        block = old.obj if isinstance(old, memoryview) else None
        if isinstance(block, bytearray) and len(block) == self.limit and \
                len(self._spares) < 2:
            # a block read to its end: no view of it is left (reads copy), so the next
            # block is received into it, without faulting in fresh pages
            self._spares.append(block)

    def _schedule(self, start: int) -> None:
        """Keep ``depth`` blocks in flight after ``start``."""
        assert self.size is not None
        nxt = max(start, self._ahead_end)
        pool = self._executor()
        while len(self._ahead) < self.depth and nxt < self.size:
            stop = min(self.size, nxt + self.limit)
            spare = self._spares.pop() if self._spares else bytearray(self.limit)
            try:
                self._ahead[nxt] = pool.submit(self._fetch_view, nxt, stop,
                                               memoryview(spare))
            except RuntimeError:  # the pool is shut down (its owner closed, the
                self._spares.append(spare)  # interpreter exiting): no read-ahead
                break
            nxt = stop
        self._ahead_end = nxt

    def _submit(self, start: int, stop: int, view: memoryview) -> Future[memoryview]:
        """A fetch into ``view`` on the executor; in this thread once it is shut down."""
        try:
            return self._executor().submit(self._fetch_view, start, stop, view)
        except RuntimeError:
            future: Future[memoryview] = Future()
            try:
                future.set_result(self._fetch_view(start, stop, view))
            except Exception as exc:  # noqa: BLE001 - raised by the future's result()
                future.set_exception(exc)
            return future
