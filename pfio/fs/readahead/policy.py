"""The read-ahead policy's base, :class:`ReadAhead` (the ``none`` strategy), and the
``sequential`` strategy (see :mod:`pfio.fs.readahead`)."""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from typing import ClassVar

#: bytes as a fetch returns them
Buffer = bytes | bytearray | memoryview
#: the bytes of ``[start, min(stop, size))``: exactly, fewer only at the end of the file
Fetch = Callable[[int, int], Buffer]
#: the same bytes received into the view (``stop - start`` long); returns their count
FetchInto = Callable[[int, int, memoryview], int]


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
