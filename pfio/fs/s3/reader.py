"""``S3Reader``: a seekable binary file over one S3 object, read by ranged GETs.

* Opening sends the first GET at once: a missing object raises ``FileNotFoundError`` from
  ``open``, the object's size comes with the answer (no HEAD), and an object up to
  ``first_fetch`` bytes is then read with this one request. With a ``first_fetch`` of
  ``PLAIN_OPENING`` or more (the default: the caller reads on from the start) it is a
  plain GET, which servers answer with less work than a ranged one; past ``first_fetch``
  bytes its connection is dropped. A smaller ``first_fetch`` (random access) sends
  ``bytes=0-N``. A negative one reads the last ``-first_fetch`` bytes instead
  (``bytes=-N``), for formats whose index is at the end (zip, Parquet): their reader then
  costs one request.
* Sequential reads from the start read on from the body of the plain opening GET, where
  the engine keeps it (the ``http`` engine): one request, received straight into the
  caller's buffer for large reads. A server that sends it slower than
  ``stream_min_rate`` bytes/s (measured while the reader waits for it, after two blocks)
  or a seek elsewhere ends it, and the reader goes on with read-ahead.
* Read-ahead is the ``background`` strategy of :mod:`pfio.fs.readahead` over ranged GETs:
  when the reader runs off the end of its buffer, it fetches twice as much as last time,
  up to ``block_size``; from then on the next ``readahead`` blocks are fetched in the
  background in parallel (memory stays below ``(readahead + 1) * block_size``). So a
  short sequential run after a seek costs little.
* A read after a seek elsewhere fetches what it asks for (at least ``random_fetch`` bytes);
  a seek inside the buffer keeps the buffer. A read of two blocks or more that is not served
  by the read-ahead fetches its blocks concurrently straight into the caller's buffer (for
  ``readinto``) or the result. ``read(0)`` sends nothing.
* :meth:`S3Reader.read_at`, :meth:`S3Reader.readinto_at` (received straight into the
  caller's buffer) and :meth:`S3Reader.read_tail` are single requests that leave the file
  position and the read-ahead alone; zip and tar archives and DCP loads on S3 use them.
* The first response's ETag pins the object: every later GET sends ``If-Match``, and an
  object replaced while the file is open raises ``OSError`` (see :mod:`pfio.fs.s3.get`);
  so does an answer that tells another size.
* Every read returns exactly the bytes asked for, or raises (see :mod:`pfio.fs.s3.get`); a
  read that raises leaves the position where it was, and writes nothing into the caller's
  buffer once it has raised (the blocks fetched concurrently into it are awaited first).
* Threads never wait behind another thread's network IO for what needs none: ``read_at``
  and ``read_tail`` of bytes in the buffer take only a short lock on the buffer (never held
  across a request), and ``close`` during another thread's read returns at once (that
  read then raises ``ValueError``, and its read-ahead is dropped when it ends). Reads,
  ``readinto``, ``peek`` and ``seek`` share the position, so they take turns.
* A pickled reader is reopened at its position. A reader inherited by a forked child
  reads on in the child with requests of its own: the parent's read-ahead (whose threads
  are not in the child) and the parent's opening GET are left to the parent.
"""

from __future__ import annotations

import contextlib
import errno
import io
import operator
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..positional import seek_position
from ..readahead import Background, Buffer
from .get import Got, get_range

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .connection import BodyRest, S3Connection


#: an opening read of this many bytes or more is a plain GET (see the module documentation)
PLAIN_OPENING = 256 << 10

#: the opening GETs' bodies that readers inherited from a parent process: kept, never read
#: nor closed here (their connections, and the pools that count them, are the parent's;
#: the pool's lock may have been held by one of its threads at the fork)
_inherited_streams: list[BodyRest] = []
#: the forks this process is the child of (a reader made before the last one was
#: inherited: see ``S3Reader._adopt``); cheaper to compare than ``os.getpid()``, a system call
_generation = 0
#: held while a reader becomes a forked child's own (made anew in each child)
_adopting = threading.Lock()


def _forked() -> None:
    global _adopting, _generation
    _adopting = threading.Lock()
    _generation += 1


os.register_at_fork(after_in_child=_forked)


@dataclass(frozen=True)
class ReadOptions:
    """How an :class:`S3Reader` fetches: sizes in bytes."""

    block_size: int = 16 << 20
    readahead: int = 3
    #: bytes the opening request reads: the first ones, or the last ``-first_fetch`` ones
    first_fetch: int = 1 << 20
    random_fetch: int = 64 << 10
    #: read on from the body of the opening GET (where the engine keeps it)
    stream: bool = True
    #: bytes/s below which reading on from the opening GET gives way to parallel
    #: read-ahead (a single connection to a distant server is often slower than that)
    stream_min_rate: float = 200e6


class S3Reader(io.BufferedIOBase):
    """A read-only, seekable file over the object ``key`` of ``fs`` (see the module doc).

    Thread-safe: reads, seeks and ``read_at`` may come from several threads.
    """

    mode = "rb"

    def __init__(self, conn: S3Connection, key: str,
                 options: ReadOptions = ReadOptions()) -> None:
        super().__init__()
        self._generation = _generation  # the process whose reader this is (see _adopt)
        self._conn = conn
        self._key = key
        self.name = conn.url(key)
        self.options = options
        self._lock = threading.RLock()  # the position's: held through a read's requests
        self._pos = 0
        if options.first_fetch < 0:
            got = get_range(conn, key, options.first_fetch)
        else:
            got = get_range(conn, key, 0, options.first_fetch,
                            plain=options.first_fetch >= PLAIN_OPENING)
        self._size = got.size
        self._etag = got.etag  # the version this file reads: later GETs send If-Match
        self._stream: BodyRest | None = got.rest  # the rest of the opening GET's body
        if self._stream is not None and not options.stream:
            self._drop_stream()
        self._stream_at = len(got.data)  # the position it reads on from
        self._stream_bytes = 0
        self._stream_wait = 0.0
        #: the buffer, the read-ahead and the bytes in it (``read_at`` may take them)
        self._ahead = Background(self._fetch, self._size, fetch_into=self._fetch_into,
                                 executor=conn.executor, depth=options.readahead,
                                 first=options.random_fetch, limit=options.block_size,
                                 name=self.name)
        start = max(0, self._size - len(got.data)) if options.first_fetch < 0 else 0
        self._ahead.hold(start, got.data)

    # -- io.BufferedIOBase ---------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        self._check_open()
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move the position (no request; the buffer is kept).

        Raises:
            OSError, ValueError: a position before the start (an error of both classes).
        """
        self._check_open()
        offset = operator.index(offset)
        with self._reading():
            self._pos = seek_position(offset, whence, self._pos, self._size, self.name)
            return self._pos

    @property
    def size(self) -> int:
        """The object's size in bytes."""
        return self._size

    @property
    def etag(self) -> str | None:
        """The ETag of the version this file reads (from its opening GET), unquoted."""
        return self._etag.strip('"') if self._etag else None

    def read(self, size: int | None = -1) -> bytes:
        self._check_open()
        with self._reading():
            left = max(0, self._size - self._pos)
            n = left if size is None or size < 0 else min(size, left)
            if n == 0:
                return b""
            view = self._ahead.view(self._pos)
            if len(view) >= n:
                self._pos += n
                return bytes(view[:n])
            out = bytearray(n)
            got = self._readinto(memoryview(out))
            del out[got:]
            return bytes(out)

    def read1(self, size: int = -1) -> bytes:
        """Read from the buffer, fetching once when it is empty at the position."""
        self._check_open()
        with self._reading():
            if size is None or size < 0:
                size = self.options.block_size
            data = bytes(self._peek_view()[:size])
            self._pos += len(data)
            return data

    def readinto(self, b: Any) -> int:
        self._check_open()
        with memoryview(b) as view, view.cast("B") as target, self._reading():
            return self._readinto(target)

    def readinto1(self, b: Any) -> int:
        return self.readinto(b)

    def readall(self) -> bytes:
        return self.read(-1)

    def peek(self, size: int = 0) -> bytes:
        """Bytes from the position on without moving it (fetching once if none are buffered)."""
        self._check_open()
        with self._reading():
            view = self._peek_view()
            return bytes(view[:size] if size > 0 else view)

    def close(self) -> None:
        """Close the file: read-ahead not started is cancelled; what is in flight ends
        into the reader's own buffers, and its results (or errors) are dropped."""
        if self._generation != _generation:
            self._adopt()
        if self._lock.acquire(blocking=False):
            try:
                self._ahead.drop()
                self._drop_stream()
            finally:
                self._lock.release()
        # else another thread is reading: it drops them when its read ends (``_reading``)
        self._ahead.close()
        super().close()

    def __repr__(self) -> str:
        return f"<S3Reader name={self.name!r} size={self._size}>"

    # -- single requests for archives -------------------------------------------------------

    def read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer only past the end): one ranged GET
        (none when the buffer holds them); the position and the read-ahead are left alone.

        Raises:
            ValueError: a negative ``offset`` or ``size``.
        """
        self._check_open()
        offset, size = operator.index(offset), operator.index(size)
        if offset < 0 or size < 0:
            raise ValueError(f"read_at of {size} bytes at offset {offset} of {self.name}: "
                             "neither may be negative")
        size = min(size, self._size - offset)
        if size <= 0:
            return b""
        data = self._ahead.held(offset, size)
        if data is None:
            data = bytes(self._get(offset, offset + size).data)
        return data

    def readinto_at(self, offset: int, buffer: Any) -> int:
        """The bytes at ``offset`` into ``buffer`` (as many as it holds, fewer only past the
        end), received straight into it by one ranged GET (none when the reader's buffer
        holds them); the position and the read-ahead are left alone. Returns their count.

        Raises:
            ValueError: a negative ``offset``.
        """
        self._check_open()
        offset = operator.index(offset)
        if offset < 0:
            raise ValueError(f"readinto_at offset {offset} of {self.name}: it may not be "
                             "negative")
        with memoryview(buffer) as view, view.cast("B") as target:
            size = min(len(target), self._size - offset)
            if size <= 0:
                return 0
            if not self._ahead.held_into(offset, target[:size]):
                self._get(offset, offset + size, into=target[:size])
            return size

    def read_tail(self, size: int) -> tuple[int, bytes]:
        """The last ``size`` bytes (all of them, in an object of fewer) and their offset:
        one suffix-range GET (``bytes=-size``), none when the buffer holds them.

        Raises:
            ValueError: a negative ``size``.
        """
        self._check_open()
        size = operator.index(size)
        if size < 0:
            raise ValueError(f"read_tail of {size} bytes of {self.name}: a negative size")
        if size == 0:
            return self._size, b""
        start = max(0, self._size - size)
        data = self._ahead.held(start, self._size - start)
        if data is None:
            got = self._get(-size)
            data, start = bytes(got.data), got.size - len(got.data)
        return start, data

    # -- pickling ------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        self._check_open()
        return _reopen, (self._conn, self._key, self._pos, self.options)

    # -- internals -----------------------------------------------------------------------

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Hold the position for a read; when the file was closed meanwhile (by another
        thread, which did not wait), drop the read-ahead and the stream once it ends."""
        with self._lock:
            try:
                yield
            finally:
                if self.closed:
                    self._ahead.drop()
                    self._drop_stream()

    def _check_open(self) -> None:
        if self._generation != _generation:
            self._adopt()
        if self.closed:
            raise ValueError(f"I/O operation on closed file {self.name}")

    def _adopt(self) -> None:
        """Make this reader, inherited by a forked child, the child's own: the parent's
        read-ahead futures (their threads are not in the child: waiting on them would
        never end) and its opening GET's body (its connection is the parent's) are left
        alone, and the lock is made anew (a parent's thread may have held it). The buffer
        is kept, unless a read was changing it at the fork."""
        with _adopting:
            if self._generation == _generation:
                return
            inherited = self._lock
            idle = inherited.acquire(blocking=False)  # no read was under way at the fork
            if idle:
                inherited.release()
            self._ahead.forget_inherited(keep_buffer=idle)
            self._lock = threading.RLock()
            if self._stream is not None:
                _inherited_streams.append(self._stream)
                self._stream = None
            self._generation = _generation

    def _get(self, start: int, stop: int | None = None,
             into: memoryview | None = None) -> Got:
        """A ranged GET of this file's version of the object: exactly the bytes of
        ``[start, min(stop, size))`` (``start < 0``: the last ``-start`` bytes)."""
        got = get_range(self._conn, self._key, start, stop, into, etag=self._etag,
                        size=self._size)
        end = self._size if stop is None else min(stop, self._size)
        expected = max(0, end - start) if start >= 0 else min(-start, self._size)
        if len(got.data) != expected:  # (get_range checks this: a second line of defence)
            raise OSError(errno.EIO, f"asked for {expected} bytes at {start}, got "
                          f"{len(got.data)}", self.name)
        return got

    def _fetch(self, start: int, stop: int) -> Buffer:
        data: Buffer = self._get(start, stop).data
        return data

    def _fetch_into(self, start: int, stop: int, view: memoryview) -> int:
        return len(self._get(start, stop, view).data)

    def _peek_view(self) -> memoryview:
        """The buffered bytes at the position, fetched when there are none."""
        if self.closed:  # (by another thread)
            raise ValueError(f"I/O operation on closed file {self.name}")
        view = self._ahead.view(self._pos)
        if not view and self._pos < self._size:
            self._fill(self.options.random_fetch)
            view = self._ahead.view(self._pos)
        return view

    def _readinto(self, target: memoryview) -> int:
        """Fill ``target`` from the position on (the caller holds the lock). When it
        raises, the position is where it was (the bytes copied before are not the
        caller's: a read that raises returns none)."""
        start = self._pos
        try:
            return self._readinto_from(target)
        except BaseException:
            self._pos = start
            raise

    def _readinto_from(self, target: memoryview) -> int:
        done = 0
        want = min(len(target), max(0, self._size - self._pos))
        ahead = self._ahead
        while done < want:
            if self.closed:  # by another thread, during this read
                raise ValueError(f"I/O operation on closed file {self.name}")
            n = ahead.copy_held(self._pos, target[done:want])
            if n:
                pass
            elif self._stream is not None and self._pos == self._stream_at and \
                    want - done >= self.options.random_fetch:
                n = self._from_stream(target[done:want])  # straight into the caller's buffer
                if not n:
                    continue  # the stream ended: fetched otherwise
            elif ahead.direct_ok(self._pos, want - done):
                n = ahead.direct(self._pos, target[done:want])
            else:
                self._fill(want - done)
                continue
            self._pos += n
            done += n
        return done

    def _fill(self, wanted: int) -> None:
        """Load the buffer at the position: from the opening GET's body when it is there,
        else as the read-ahead decides (a read elsewhere ends the body)."""
        pos = self._pos
        if self._stream is not None and pos == self._stream_at:
            size = min(self._ahead.window(), self._stream.left)
            spare = memoryview(self._ahead.spare(size))[:size]
            n = self._from_stream(spare)
            if n:
                self._ahead.hold(pos, spare[:n])
                return
        if not self._ahead.reads_on(pos):
            self._drop_stream()  # random access from now on
        self._ahead.fill(pos, wanted)

    def _from_stream(self, target: memoryview) -> int:
        """Read on from the opening GET's body into ``target`` at the position; 0 when it
        broke (it is dropped: the caller fetches otherwise). Ends it when it is read to its
        end, or is too slow."""
        stream = self._stream
        assert stream is not None
        began = time.perf_counter()
        try:
            n = stream.readinto(target)
        except OSError:
            n = 0
        if not n:  # (a stream that brings nothing is broken too: never wait on it again)
            self._drop_stream()
            return 0
        self._stream_wait += time.perf_counter() - began
        self._stream_bytes += n
        self._stream_at += n
        if not stream.left:
            self._stream = None  # read to its end: its connection went back to the pool
        elif self._stream_bytes >= 2 * self.options.block_size and \
                self._stream_bytes < self.options.stream_min_rate * self._stream_wait:
            self._drop_stream()  # parallel ranged GETs take over
        return n

    def _drop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()


def _reopen(conn: S3Connection, key: str, pos: int, options: ReadOptions) -> S3Reader:
    reader = S3Reader(conn, key, options)
    reader.seek(pos)
    return reader
