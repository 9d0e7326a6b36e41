"""Read-ahead: one policy over a ``fetch(start, stop)``, with named strategies chosen per use.

A :class:`ReadAhead` serves reads at positions of a file from the bytes it holds and, when
a read misses them, decides what to fetch: a strategy is that decision. The bytes come from
``fetch(start, stop)``, which returns exactly the bytes of ``[start, min(stop, size))``
(fewer only at the end of a file of unknown size), or raises; ``fetch_into(start, stop,
view)``, where the source has it, receives them into ``view`` instead (no copy). Every
fetch is checked: bytes missing before the known end raise ``OSError`` (``EIO``) naming
the file, so a read returns exactly the bytes asked for, after a seek, at the end, or
never. The object owns no position: its owner (a file object) passes the position to each
call, holds its own lock around the calls that fetch, and may call :meth:`ReadAhead.held`
and :meth:`ReadAhead.held_into` from any thread.

The strategies (:data:`STRATEGIES`, made by name with :func:`make`):

``none`` (:class:`ReadAhead`)
    each read fetches exactly its bytes, straight into the caller's buffer; nothing is held.
``whole`` (:class:`Whole`)
    the first miss fetches the whole file; later reads are served from memory.
``sequential`` (:class:`Sequential`)
    a window of ``first`` bytes after a seek that doubles while reads go on from where the
    last fetch ended, up to ``limit``; a read elsewhere fetches what it asks for (at least
    ``first``). With ``slack`` a forward skip of less than a window still reads on (a scan
    of tar headers skipping small members' data); with ``whole_reads`` a miss fetches at
    least the rest of the read in one call (one request per large read).
``background`` (:class:`Background`)
    ``sequential``, and once a fetch is a whole ``limit`` (a block), the next ``depth``
    blocks are fetched in parallel on an executor; a read of two blocks or more that they
    do not serve is fetched as concurrent blocks straight into the caller's buffer.
``blocks`` (:class:`Blocks`)
    reads rounded out to whole aligned blocks, each run of missing blocks one fetch; the
    blocks are kept by a :class:`BlockStore` (a sparse file shared by processes).

Who uses which: S3's reader ``background`` (:mod:`pfio.fs.s3.reader`, which also reads on
from the body of its opening GET and hands those bytes to :meth:`ReadAhead.hold`); tar
members and the scan of tar headers ``sequential`` with ``slack`` and ``whole_reads``
(:class:`pfio.containers.tar_io.RangeReader`), zip members streamed ``sequential``
(:class:`pfio.containers.zip_member.MemberStream`); the block cache ``blocks``
(:class:`pfio.cache.blocks.BlockFile`).

Not served by it, because they decide differently:

* Ray's Parquet prefetch (:mod:`pfio.integrations.ray.prefetch`) plans from the file's
  footer and from which columns pyarrow reads, not from where reads fall: it fetches the
  other column chunks of those columns, in file order, on a pool of its own, while
  pyarrow's reads jump between row groups (every one a "seek" to a position-based policy).
* The TensorFlow plugin's reader (:mod:`pfio.integrations.tensorflow.plugin.files`) keeps
  one block in flight over a file object that reads ahead itself (S3's reader), and only
  while one file is read alone: it overlaps TensorFlow's parsing with the file's own reads.
* HDFS files (:mod:`pfio.fs.hdfs.files`) are an ``io.BufferedReader`` (1 MiB, or the
  ``buffering`` asked for) over positional reads: each refill is one request, and nothing
  is fetched before a read asks for it.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any, ClassVar, Protocol, TypeVar

#: bytes as a fetch returns them
Buffer = bytes | bytearray | memoryview
#: the bytes of ``[start, min(stop, size))``: exactly, fewer only at the end of the file
Fetch = Callable[[int, int], Buffer]
#: the same bytes received into the view (``stop - start`` long); returns their count
FetchInto = Callable[[int, int, memoryview], int]

T = TypeVar("T")


class Pool(Protocol):
    """What fetches ahead: a ``concurrent.futures`` executor, or S3's worker pool."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` in the pool; ``RuntimeError`` once it is shut down."""


class ReadAhead:
    """The ``none`` strategy, and the base of the others: the bytes held (one buffer at an
    offset), served to reads, and what a miss fetches.

    Args:
        fetch: see the module documentation.
        size: the file's size, or None when it is unknown (a short fetch is then its end).
        fetch_into: receives a fetch into a view (see the module documentation).
        name: the file's name, for error messages.
    """

    strategy: ClassVar[str] = "none"

    def __init__(self, fetch: Fetch, size: int | None, *, fetch_into: FetchInto | None = None,
                 name: str = "") -> None:
        self.size = size
        self.name = name
        self._fetch = fetch
        self._fetch_into = fetch_into
        self._state = threading.Lock()  # the bytes held: never held across a fetch
        self._buf = memoryview(b"")
        self._buf_start = 0
        self._fetched_to: int | None = None  # where the last fill ended
        self._last = 0  # bytes of the last fill
        self._closed = False

    # -- reads ---------------------------------------------------------------------------

    def readinto(self, pos: int, target: memoryview) -> int:
        """Fill ``target`` with the bytes from ``pos`` on; their count (fewer only at the
        end of the file)."""
        done = 0
        want = self._left(pos, len(target))
        while done < want:
            at, rest = pos + done, target[done:want]
            n = self.copy_held(at, rest)
            if n == 0:
                if not self.direct_ok(at, len(rest)):
                    if self.fill(at, len(rest)) == 0:
                        break  # the end of a file of unknown size
                    continue
                n = self.direct(at, rest)
                if n == 0:
                    break
            done += n
        return done

    def read(self, pos: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``pos`` (fewer only at the end of the file)."""
        size = self._left(pos, size)
        view = self.view(pos)
        if not view and size and not self.direct_ok(pos, size) and self.fill(pos, size):
            view = self.view(pos)
        if len(view) >= size:  # (one copy: the usual case)
            return bytes(view[:size])
        out = bytearray(size)
        del out[self.readinto(pos, memoryview(out)):]
        return bytes(out)

    def copy_held(self, pos: int, target: memoryview) -> int:
        """Copy the held bytes at ``pos`` into ``target``; their count (0: none held)."""
        buf, offset = self._buf, pos - self._buf_start
        if not 0 <= offset < len(buf):
            return 0
        n = min(len(target), len(buf) - offset)
        target[:n] = buf[offset:offset + n]
        return n

    def view(self, pos: int) -> memoryview:
        """The held bytes from ``pos`` on (empty: none)."""
        buf, offset = self._buf, pos - self._buf_start
        return buf[offset:] if 0 <= offset < len(buf) else memoryview(b"")

    def held(self, offset: int, size: int) -> bytes | None:
        """The ``size`` bytes at ``offset`` when all are held, else None (from any thread,
        never waiting for a fetch)."""
        with self._state:
            start = offset - self._buf_start
            if start < 0 or start + size > len(self._buf):
                return None
            return bytes(self._buf[start:start + size])

    def held_into(self, offset: int, target: memoryview) -> bool:
        """Copy the bytes at ``offset`` into ``target`` when all are held (from any thread,
        never waiting for a fetch); whether it did."""
        with self._state:
            start = offset - self._buf_start
            if start < 0 or start + len(target) > len(self._buf):
                return False
            target[:] = self._buf[start:start + len(target)]
            return True

    # -- what a miss fetches -------------------------------------------------------------

    def reads_on(self, pos: int) -> bool:
        """Whether a miss at ``pos`` goes on from the last fill (else it is a seek)."""
        return False

    def direct_ok(self, pos: int, size: int) -> bool:
        """Whether a miss of ``size`` bytes at ``pos`` is fetched straight into the
        caller's buffer rather than held."""
        return True

    def direct(self, pos: int, target: memoryview) -> int:
        """Fetch the bytes at ``pos`` straight into ``target``; their count."""
        return len(self._fetch_view(pos, pos + len(target), target))

    def fill(self, pos: int, wanted: int) -> int:
        """Hold the bytes at ``pos`` for a read of ``wanted`` bytes; their count (0: the
        end of the file)."""
        return self.hold(pos, self._fetch_new(pos, pos + wanted))

    def hold(self, start: int, data: Buffer) -> int:
        """Hold ``data``, the file's bytes from ``start`` on (a fill, or bytes its owner
        read otherwise); their count.

        Raises:
            OSError: ``data`` is empty before the known end of the file.
        """
        if not data:
            if self.size is not None and start < self.size:
                raise OSError(errno.EIO, f"object shrank while being read at byte {start}",
                              self.name)
            return 0
        with self._state:  # (``held`` copies from the buffer: not while it is replaced)
            if not self._closed:
                self._recycle(self._buf)
                self._buf = memoryview(data)
                self._buf_start = start
                self._fetched_to = start + len(data)
                self._last = len(data)
        return len(data)

    # -- lifetime ------------------------------------------------------------------------

    def drop(self) -> None:
        """Forget what is fetched ahead (the bytes held stay)."""

    def close(self) -> None:
        """Forget the bytes held, from any thread (its owner calls :meth:`drop` under its
        own lock: fetches in flight end into buffers nobody reads)."""
        with self._state:
            self._closed = True
            self._buf = memoryview(b"")

    def forget_inherited(self, keep_buffer: bool) -> None:
        """Make this object a forked child's own: fetches in flight (the parent's threads)
        are forgotten without waiting for them, the lock is made anew, and the bytes held
        are kept only with ``keep_buffer``."""
        self._state = threading.Lock()
        if not keep_buffer:
            self._buf, self._buf_start, self._fetched_to, self._last = memoryview(b""), 0, 0, 0

    # -- internals -----------------------------------------------------------------------

    def _left(self, pos: int, size: int) -> int:
        return max(0, size) if self.size is None else max(0, min(size, self.size - pos))

    def _stop(self, stop: int) -> int:
        return stop if self.size is None else min(stop, self.size)

    def _check(self, start: int, stop: int, got: int) -> None:
        expected = self._stop(stop) - start
        if got != expected and (self.size is not None or got > expected):
            raise OSError(errno.EIO, f"asked for {expected} bytes at {start}, got {got}",
                          self.name)

    def _fetch_new(self, start: int, stop: int) -> Buffer:
        """The bytes of ``[start, stop)`` (capped at the end) in a buffer of their own."""
        if self._stop(stop) <= start:
            return b""
        data = self._fetch(start, stop)  # (asked as wanted: the fetch caps it)
        self._check(start, stop, len(data))
        return data

    def _fetch_view(self, start: int, stop: int, view: memoryview) -> memoryview:
        """The bytes of ``[start, stop)`` received into ``view``; the filled part of it."""
        stop = self._stop(stop)
        if stop <= start:
            return view[:0]
        if self._fetch_into is not None:
            n = self._fetch_into(start, stop, view[:stop - start])
        else:
            data = self._fetch(start, stop)
            n = len(data)
            if n <= len(view):
                view[:n] = data
        self._check(start, stop, n)
        return view[:n]

    def _recycle(self, old: memoryview) -> None:
        """``old``, the buffer being replaced, may be reused (the caller holds the lock)."""


class Whole(ReadAhead):
    """The ``whole`` strategy: the first miss fetches the whole file (of known size)."""

    strategy = "whole"

    def direct_ok(self, pos: int, size: int) -> bool:
        return False

    def fill(self, pos: int, wanted: int) -> int:
        if self.size is None:
            return super().fill(pos, wanted)
        n = self.hold(0, self._fetch_new(0, self.size))
        return max(0, n - pos)


class Sequential(ReadAhead):
    """The ``sequential`` strategy (see the module documentation).

    Args:
        first: bytes fetched after a seek (and at least, by a read elsewhere).
        limit: the largest window.
        slack: a forward skip of less than a window from the last fill still reads on.
        whole_reads: a miss fetches at least the rest of the read.
    """

    strategy = "sequential"

    def __init__(self, fetch: Fetch, size: int | None, *, first: int = 64 << 10,
                 limit: int = 16 << 20, slack: bool = False, whole_reads: bool = False,
                 fetch_into: FetchInto | None = None, name: str = "") -> None:
        super().__init__(fetch, size, fetch_into=fetch_into, name=name)
        if first <= 0:
            raise ValueError(f"read-ahead of {name}: the first window must be positive, "
                             f"not {first}")
        self.first = first
        self.limit = max(first, limit)
        self.slack = slack
        self.whole_reads = whole_reads

    def window(self) -> int:
        """The bytes the next fill reading on fetches: twice the last, within bounds."""
        return min(self.limit, max(self.first, 2 * self._last))

    def reads_on(self, pos: int) -> bool:
        if self._fetched_to is None:
            return False
        gap = pos - self._fetched_to
        return gap == 0 or self.slack and 0 <= gap < max(self._last, self.first)

    def direct_ok(self, pos: int, size: int) -> bool:
        return False

    def fill(self, pos: int, wanted: int) -> int:
        if self.reads_on(pos):
            size = max(wanted, self.window()) if self.whole_reads else self.window()
        else:
            size = max(wanted, self.first)
        return self.hold(pos, self._fetch_new(pos, pos + size))


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
        """Fetch ``target``'s bytes in blocks fetched concurrently; the bytes held are not
        used. When a block fails, the others are cancelled or awaited before the error is
        raised: nothing writes into ``target`` once this has returned or raised."""
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


class BlockStore(Protocol):
    """Where :class:`Blocks` keeps the blocks it fetched."""

    def present(self, first: int, count: int) -> bytes:
        """One byte per block ``first`` .. ``first + count - 1``: nonzero when it is kept."""

    def put(self, block: int, data: memoryview) -> None:
        """Keep ``data``: whole blocks from ``block`` on (the last may end the file)."""

    def get(self, offset: int, size: int) -> bytes:
        """The kept bytes ``[offset, offset + size)``."""


class Blocks(ReadAhead):
    """The ``blocks`` strategy: a read is rounded out to whole blocks of ``block_size``,
    each run of blocks the store does not keep is one fetch (in this thread, under a lock:
    two threads missing one block fetch it once), and the read is served by the store."""

    strategy = "blocks"

    def __init__(self, fetch: Fetch, size: int, *, store: BlockStore, block_size: int,
                 name: str = "") -> None:
        super().__init__(fetch, size, name=name)
        self.block_size = block_size
        self._store = store
        self._lock = threading.Lock()

    def missing(self, offset: int, size: int) -> bool:
        """Whether the store lacks a block of ``[offset, offset + size)``."""
        first, last = self._blocks(offset, size)
        return b"\x00" in self._store.present(first, last - first + 1)

    def read(self, pos: int, size: int) -> bytes:
        size = self._left(pos, size)
        if size <= 0:
            return b""
        first, last = self._blocks(pos, size)
        present = self._store.present(first, last - first + 1)
        if b"\x00" in present:
            with self._lock:  # (another thread may have fetched them meanwhile)
                self._fetch_missing(first, self._store.present(first, len(present)))
        return self._store.get(pos, size)

    def readinto(self, pos: int, target: memoryview) -> int:
        data = self.read(pos, len(target))
        target[:len(data)] = data
        return len(data)

    def _blocks(self, offset: int, size: int) -> tuple[int, int]:
        return offset // self.block_size, (offset + size - 1) // self.block_size

    def _fetch_missing(self, first: int, present: bytes) -> None:
        index = 0
        while index < len(present):
            if present[index]:
                index += 1
                continue
            run = index
            while index < len(present) and not present[index]:
                index += 1
            start = (first + run) * self.block_size
            data = self._fetch_new(start, self._stop((first + index) * self.block_size))
            self._store.put(first + run, memoryview(data))


#: the strategies by name
STRATEGIES: dict[str, type[ReadAhead]] = {
    cls.strategy: cls for cls in (ReadAhead, Whole, Sequential, Background, Blocks)}


def make(strategy: str, fetch: Fetch, size: int | None, **options: Any) -> ReadAhead:
    """A :class:`ReadAhead` of the named strategy over ``fetch`` (``options``: its
    class's keyword arguments).

    Raises:
        ValueError: an unknown strategy (the message lists the known ones).
    """
    try:
        cls = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"unknown read-ahead strategy {strategy!r}; known: "
                         f"{', '.join(sorted(STRATEGIES))}") from None
    return cls(fetch, size, **options)
