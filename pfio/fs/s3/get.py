"""Ranged GETs that survive throttling and broken connections, of one object version.

:func:`get_range` asks for one byte range and returns exactly those bytes: when the
connection breaks in the middle of the body, the next attempt asks only for the bytes not
received yet, so every byte reaches the caller exactly once. A try that received some
bytes before the connection broke does not count against ``max_attempts`` when it brought bytes that
matter: at least ``min_rate x read_timeout`` of them, or half of those left (a server that
sends one byte per connection and then resets uses up the tries), and unless they came too
slowly. A whole range has an
overall deadline proportional to its size (the longer retry deadline plus its size at
``min_rate``): a read that goes on making progress too slowly ends with an ``OSError``.

Every response must be of one version of the object: the first one's ETag is returned and
a reader passes it back (``etag=``) with its later GETs, which then send ``If-Match`` and
check the ETag and ``Content-Range`` they get. An object replaced meanwhile raises
``OSError`` naming the URL, never mixing bytes of two versions: an answer without the ETag
when there is one to match counts as another version, and so does one that tells another
size than the caller knows (``size=``). A server that answers a range with the whole
object (200) is read from the offset that was asked for.

Each answer is checked against what was asked, once per answer (no work per byte): its
status is 200 or 206; a 206 has one well-formed ``Content-Range`` whose first byte is the
one asked for, whose last byte is not past the one asked for and whose total is the
object's size, and a ``Content-Length`` (where the engine tells one) of no more bytes than
that range; a 200 has a ``Content-Length``. An answer that fails these checks raises
``OSError`` at once. The bytes received must then be all the bytes asked for: a body that
ends early (by its ``Content-Length``, its last chunk, or its connection's end), or a 206
of fewer bytes than asked, is taken as a broken connection: what came is kept and the rest
is asked for again, and when the tries are used up it raises ``OSError`` naming the URL.
The caller never gets a byte that did not come from the server (no zeros of a buffer
filled short).
"""

from __future__ import annotations

import errno
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...trace import hook
from ...trace.redact import redact
from .errors import RangeNotSatisfiable, TooSlow
from .http1 import MIN_RATE
from .retry import Attempts, status_of

if TYPE_CHECKING:
    from .connection import S3Connection
    from .engine import BodyRest

_CONTENT_RANGE = re.compile(r"bytes ([0-9]+)-([0-9]+)/([0-9]+)")
_TOTAL = re.compile(r"/(\d+)")


@dataclass
class Got:
    """What :func:`get_range` returns: the bytes, the object's size and its ETag."""

    data: Any
    size: int
    etag: str | None
    #: the rest of the body of a plain GET, where the engine kept it for reading on
    rest: BodyRest | None = None


def get_range(conn: S3Connection, key: str, start: int, stop: int | None = None,
              into: memoryview | None = None, etag: str | None = None,
              plain: bool = False, size: int | None = None) -> Got:
    """GET bytes ``[start, stop)`` of ``key`` (``stop=None``: to the end; ``start < 0``: the
    last ``-start`` bytes).

    With ``plain`` (and ``start == 0``) the first request is a GET of the whole object,
    without a ``Range`` header, of which the bytes before ``stop`` are kept: a server
    answers such a GET with less work than a ranged one (Ceph RGW: about a fifth more GETs
    per second). Where the engine can, the rest of the body stays on its connection for
    the caller to read on (``Got.rest``; the caller closes it), else the connection is
    dropped.

    With ``into`` the bytes are written into that buffer and ``data`` is a memoryview of
    its filled part; otherwise a ``bytearray`` the body was received into. ``data`` holds
    exactly the bytes of ``[start, min(stop, size))``. A range starting at or beyond the
    end gives empty data (and still the size). With ``etag`` the object must still have
    that ETag, and with ``size`` that size.

    Raises:
        FileNotFoundError, PermissionError, OSError: see :mod:`pfio.fs.s3.errors`; OSError
        also when the object is no longer the version of ``etag`` (or of ``size``), and
        when the server's answers do not hold the bytes asked for (see the module
        documentation).
        ValueError: ``stop`` is before ``start``.
    """
    if stop is not None and 0 <= stop < start:
        raise ValueError(f"a range that ends ({stop}) before it starts ({start})")
    url = conn.url(key)
    attempts = Attempts(conn.retry, "GET", url)
    began = time.perf_counter()
    pace = _Pace(conn, attempts)
    engine = conn.engine()
    sink = _Sink(url, start, stop, into, etag, plain and start == 0 and engine.plain_gets,
                 size)
    while True:
        rng = sink.next_range()
        try:
            engine.get(conn.bucket, key, rng, sink.etag, sink)
            if sink.length < 0:
                raise sink.refuse("no answer to check")
            if sink.got < sink.length:  # (every engine ends a body at its framing)
                raise IncompleteBody(f"the answer to GET {rng or 'of the whole object'} "
                                     f"ended {sink.length - sink.got} bytes short")
        except _Refused:  # (a 412 answer to If-Match is translated to _Changed's text)
            _record(began, sink.status, sink.got, attempts.count + 1, url, error=True)
            raise
        except Exception as exc:
            empty = _unsatisfiable(exc) if sink.length < 0 else None
            if empty is not None:
                total = sink.check_empty(empty)
                _record(began, 416, 0, attempts.count + 1, url)
                attempts.succeeded()
                return Got(into[:0] if into is not None else b"", total, sink.etag)
            pace.check(sink.length, exc)
            if pace.mattered(sink) and not isinstance(exc, TooSlow):
                attempts.reset()  # a try that brought bytes does not use up the budget
                # (unless it brought few, or too slowly: a trickle must not go on for ever)
            _fail(attempts, exc, began, url)
            continue
        _record(began, sink.status, sink.got, attempts.count + 1, url)
        attempts.succeeded()
        return Got(sink.result(), sink.total, sink.etag, sink.rest)


class IncompleteBody(ConnectionError):
    """An answer ended before it brought every byte asked for (retried as a broken
    connection, resuming after the last byte received)."""


class _Refused(OSError):
    """An answer that cannot be of the bytes asked for (not retried)."""


class _Changed(_Refused):
    """The object is not the version an open file pinned."""


_CHANGED = "the object changed while it was open ({} {} is now {}): reopen it"


class _Sink:
    """The bytes of one range as they arrive, across attempts (an engine's ``BodySink``)."""

    def __init__(self, url: str, start: int, stop: int | None, into: memoryview | None,
                 etag: str | None, plain: bool = False, size: int | None = None) -> None:
        self.url = url
        self.plain = plain
        self.rest: BodyRest | None = None
        self.start = start
        self.stop = stop
        self.into = into
        self.etag = etag
        self.size = size  # the object's size the caller knows, else None
        self.first = -1  # the first byte of the range, known from the first response
        self.length = -1
        self.total = -1
        self.got = 0
        self.status: int | None = None
        self._skip = 0
        self._before = 0
        self._owned: bytearray | None = None

    def next_range(self) -> str:
        """The ``Range`` header of the next attempt ("": none, a plain GET)."""
        self._before = self.got
        if self.plain and self.first < 0:
            return ""
        if self.first >= 0:
            return f"bytes={self.first + self.got}-{self.first + self.length - 1}"
        if self.start < 0:
            return f"bytes={self.start}"
        return f"bytes={self.start}-" + (str(self.stop - 1) if self.stop is not None else "")

    def moved(self) -> int:
        """The bytes the latest attempt brought."""
        return self.got - self._before

    def begin(self, status: int, headers: dict[str, str]) -> None:
        """Check an answer against what was asked (see the module documentation), and
        make ready to receive its body."""
        etag = headers.get("etag")
        if etag != self.etag and self.etag is not None:
            raise _Changed(errno.EIO, _CHANGED.format("ETag", self.etag, etag or "missing"),
                           self.url)
        self.etag = etag
        self.status = status
        first, last, total = self._extent(status, headers)
        opening = self.first < 0  # the first response
        if opening:
            if self.size is not None and total != self.size:
                raise _Changed(errno.EIO, _CHANGED.format("size", self.size, total),
                               self.url)
            want = self.start if self.start >= 0 else max(0, total + self.start)
            end = total if self.stop is None else min(self.stop, total)
            asked = total - 1 if self.plain or self.stop is None else end - 1
        else:
            if total != self.total:
                raise _Changed(errno.EIO, _CHANGED.format("size", self.total, total),
                               self.url)
            want = self.first + self.got
            end = self.first + self.length
            asked = end - 1
        if status == 206:
            if first != want or last > asked:  # (fewer bytes than asked: resumed)
                raise self.refuse(f"asked for bytes {want}-{asked}, got bytes "
                                  f"{first}-{last}/{total}")
            self._skip = 0
        else:  # the whole object: skip to the bytes asked for
            self._skip = want
        if opening:
            self.first, self.total = want, total
            self.length = max(0, end - want)
            if self.into is not None:
                self.into = self.into[:self.length]
            else:  # received straight into it by the engines that can
                self._owned = bytearray(self.length)
                self.into = memoryview(self._owned)

    def _extent(self, status: int, headers: dict[str, str]) -> tuple[int, int, int]:
        """(first byte, last byte, total size) of an answer, whose framing is checked."""
        text = headers.get("content-length")
        length = -1
        if text is not None:
            if not (text.isdigit() and text.isascii()):  # (a duplicate: "5, 5")
                raise self.refuse(f"Content-Length {text[:40]!r}")
            length = int(text)
        if status == 206:
            value = headers.get("content-range") or ""
            match = _CONTENT_RANGE.fullmatch(value)
            if match is None:
                raise self.refuse(f"a 206 answer with Content-Range {value[:80]!r}")
            first, last, total = int(match[1]), int(match[2]), int(match[3])
            if not first <= last < total:
                raise self.refuse(f"Content-Range {value[:80]!r}")
            if length > last - first + 1:
                raise self.refuse(f"{length} bytes of body for Content-Range {value[:80]!r}")
            return first, last, total
        if status == 200:  # (Content-Range means nothing in a 200: RFC 9110, 14.4)
            if length < 0:
                raise self.refuse("a 200 answer without Content-Length")
            return 0, length - 1, length
        raise self.refuse(f"status {status} to a GET")

    def refuse(self, what: str) -> _Refused:
        """The error for an answer that is not of the bytes asked for."""
        return _Refused(errno.EIO, f"not the bytes asked for ({what})",
                        self.url)

    def check_empty(self, size: int) -> int:
        """The object's size after a 416 answer that tells ``size`` (-1: none), checked
        against the size the caller knows."""
        if size < 0 and self.start <= 0:
            size = 0  # nothing at byte 0 or at the end: an empty object (Ceph tells no size)
        known = self.size
        if known is not None and ((size >= 0 and size != known) or
                                  (self.start < known if self.start >= 0 else known > 0)):
            raise _Changed(errno.EIO, _CHANGED.format("size", known, max(size, 0)), self.url)
        return size

    def target(self) -> memoryview | None:
        if self.into is None or self._skip:
            return None
        return self.into[self.got:self.length]

    def advance(self, n: int) -> None:
        self.got += n

    def write(self, chunk: Any) -> int:
        into = self.into
        assert into is not None  # set once the answer began (begin)
        got = self.got
        end = got + len(chunk)
        if not self._skip and end <= self.length:
            into[got:end] = chunk  # the common case: kept short, it runs per 16 KiB
            self.got = end
            return len(chunk)
        view = memoryview(chunk)
        skipped = min(self._skip, len(view))
        self._skip -= skipped
        n = max(0, min(len(view) - skipped, self.length - self.got))
        into[self.got:self.got + n] = view[skipped:skipped + n]
        self.got += n
        return skipped + n

    def take_rest(self, rest: BodyRest) -> bool:
        if not self.plain:
            return False
        self.rest = rest
        return True

    def complete(self) -> bool:
        return self.got >= self.length

    def result(self) -> Any:
        if self._owned is not None:
            return self._owned
        return self.into


class _Pace:
    """The progress a read must make: ``enough`` bytes a try for a fresh budget of tries,
    and the whole range within the longer retry deadline plus its size at ``min_rate``."""

    def __init__(self, conn: S3Connection, attempts: Attempts) -> None:
        settings, policy = conn.settings, conn.retry
        self.rate = MIN_RATE if settings.min_rate is None else float(settings.min_rate)
        self.enough = self.rate * settings.read_timeout
        deadlines = [d for d in (policy.deadline, policy.throttle_deadline) if d is not None]
        self.grace = max(deadlines) if deadlines and self.rate > 0 else None  # (0: no floor)
        self.attempts = attempts
        self.since = policy.now()

    def mattered(self, sink: _Sink) -> bool:
        """Whether the latest try of ``sink`` brought ``enough`` bytes, or half of those it
        had left to bring (a reset after every byte uses up the tries; halves end in a
        number of tries that grows with the log of the size)."""
        moved = sink.moved()
        if moved <= 0:
            return False
        left = sink.length - (sink.got - moved) if sink.length >= 0 else moved
        return moved >= min(self.enough, left / 2)

    def check(self, length: int, exc: BaseException) -> None:
        """Raise when a read of ``length`` bytes (-1: not known yet) that failed with ``exc``
        has gone on for longer than its overall deadline."""
        if self.grace is None:
            return
        allowed = self.grace + max(length, 0) / self.rate
        spent = self.attempts.policy.now() - self.since
        if spent > allowed:
            raise OSError(errno.EIO, f"reading {max(length, 0)} bytes took longer than "
                          f"{allowed:.0f} s ({self.attempts.count + 1} tries, the last: "
                          f"{type(exc).__name__}: {redact(str(exc))}): the server is too "
                          "slow",
                          self.attempts.url) from exc


def _unsatisfiable(exc: BaseException) -> int | None:
    """The object size an ``InvalidRange`` (416) error tells (-1: none), else None."""
    if not isinstance(exc, RangeNotSatisfiable):
        return None
    if exc.object_size is not None:
        return exc.object_size
    match = _TOTAL.search(exc.headers.get("content-range", ""))
    return int(match.group(1)) if match else -1


def _fail(attempts: Attempts, exc: BaseException, began: float, url: str) -> None:
    try:
        attempts.failed(exc)
    except OSError:
        if hook.ENABLED:
            hook.record_request("s3", "GET", status=status_of(exc),
                                seconds=time.perf_counter() - began,
                                attempts=attempts.count, error=True, url=url)
        raise


def _record(began: float, status: int | None, nbytes: int, attempts: int, url: str,
            error: bool = False) -> None:
    if hook.ENABLED:
        hook.record_request("s3", "GET", status=status, nbytes=nbytes,
                            seconds=time.perf_counter() - began, attempts=attempts,
                            error=error, url=url)
