"""Ranged GETs that survive throttling and broken connections, of one object version.

:func:`get_range` asks for one byte range and returns exactly those bytes: when the
connection breaks in the middle of the body, the next attempt asks only for the bytes not
received yet, so every byte reaches the caller exactly once. A try that received some
bytes before the connection broke does not count against ``max_attempts``.

Every response must be of one version of the object: the first one's ETag is returned and
a reader passes it back (``etag=``) with its later GETs, which then send ``If-Match`` and
check the ETag and ``Content-Range`` they get. An object replaced meanwhile raises
``OSError`` naming the URL, never mixing bytes of two versions. A server that answers a
range with the whole object (200) is read from the offset that was asked for.
"""

from __future__ import annotations

import errno
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...trace import hook
from .errors import client_error_info
from .retry import Attempts

if TYPE_CHECKING:
    from .connection import BodyRest, S3Connection

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
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
              plain: bool = False) -> Got:
    """GET bytes ``[start, stop)`` of ``key`` (``stop=None``: to the end; ``start < 0``: the
    last ``-start`` bytes).

    With ``plain`` (and ``start == 0``) the first request is a GET of the whole object,
    without a ``Range`` header, of which the bytes before ``stop`` are kept: a server
    answers such a GET with less work than a ranged one (Ceph RGW: about a fifth more GETs
    per second). Where the engine can, the rest of the body stays on its connection for
    the caller to read on (``Got.rest``; the caller closes it), else the connection is
    dropped.

    With ``into`` the bytes are written into that buffer and ``data`` is a memoryview of
    its filled part; otherwise a ``bytearray`` the body was received into. A range starting
    at or beyond the end gives empty data (and still the size). With ``etag`` the object
    must still have that ETag.

    Raises:
        FileNotFoundError, PermissionError, OSError: see :mod:`pfio.fs.s3.errors`; OSError
        also when the object is no longer the version of ``etag``.
    """
    url = conn.url(key)
    attempts = Attempts(conn.retry, "GET", url)
    began = time.perf_counter()
    engine = conn.engine()
    sink = _Sink(url, start, stop, into, etag, plain and start == 0 and engine.plain_gets)
    while True:
        rng = sink.next_range()
        try:
            engine.get(conn.bucket, key, rng, sink.etag, sink)
        except _Changed:
            raise  # (a 412 answer to If-Match is translated to the same error)
        except Exception as exc:
            size = _unsatisfiable(exc) if sink.length < 0 else None
            if size is not None:
                if size < 0 and start <= 0:
                    size = 0  # nothing at byte 0 or at the end: an empty object (Ceph tells
                    # no size)
                _record(began, 416, 0, attempts.count + 1, url)
                return Got(into[:0] if into is not None else b"", size, sink.etag)
            if sink.progressed():
                attempts.reset()  # a try that brought bytes does not use up the budget
            _fail(attempts, exc, began, url)
            continue
        _record(began, sink.status, sink.got, attempts.count + 1, url)
        return Got(sink.result(), sink.total, sink.etag, sink.rest)


class _Sink:
    """The bytes of one range as they arrive, across attempts (an engine's ``BodySink``)."""

    def __init__(self, url: str, start: int, stop: int | None, into: memoryview | None,
                 etag: str | None, plain: bool = False) -> None:
        self.url = url
        self.plain = plain
        self.rest: BodyRest | None = None
        self.start = start
        self.stop = stop
        self.into = into
        self.etag = etag
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

    def progressed(self) -> bool:
        return self.got > self._before

    def begin(self, status: int, headers: dict[str, str]) -> None:
        etag = headers.get("etag")
        if self.etag is not None and etag is not None and etag != self.etag:
            raise _Changed(errno.EIO, _CHANGED.format(self.etag, etag), self.url)
        self.etag = self.etag or etag
        self.status = status
        first, length, total = _extent(status, headers)
        if self.first < 0:  # the first response
            want = self.start if self.start >= 0 else max(0, total - (-self.start))
            if self.stop is not None:
                length = min(length, self.stop - first)
            self.first, self.total = want, total
        else:
            want = self.first + self.got
        if first > want:
            raise OSError(errno.EIO, f"asked for bytes from {want}, got bytes {first}-"
                          f"{first + length - 1} of {total}", self.url)
        self._skip = want - first
        if self.length < 0:
            self.length = max(0, first + length - want)
            if self.into is not None:
                self.into = self.into[:self.length]
            else:  # received straight into it by the engines that can
                self._owned = bytearray(self.length)
                self.into = memoryview(self._owned)

    def target(self) -> memoryview | None:
        if self.into is None or self._skip:
            return None
        return self.into[self.got:self.length]

    def advance(self, n: int) -> None:
        self.got += n

    def write(self, chunk: Any) -> int:
        got = self.got
        end = got + len(chunk)
        if not self._skip and end <= self.length:
            self.into[got:end] = chunk  # the common case: kept short, it runs per 16 KiB
            self.got = end
            return len(chunk)
        view = memoryview(chunk)
        skipped = min(self._skip, len(view))
        self._skip -= skipped
        n = max(0, min(len(view) - skipped, self.length - self.got))
        self.into[self.got:self.got + n] = view[skipped:skipped + n]
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


class _Changed(OSError):
    """The object is not the version an open file pinned."""


_CHANGED = "the object changed while it was open (ETag {} is now {}): reopen it"


def _extent(status: int, headers: dict[str, str]) -> tuple[int, int, int]:
    """(first byte, length, total size) of a GET response."""
    length = int(headers.get("content-length", 0))
    match = _CONTENT_RANGE.match(headers.get("content-range") or "")
    if status != 206 or match is None:  # a whole object (200)
        return 0, length, length
    first, last, total = match.groups()
    return int(first), int(last) - int(first) + 1, int(total) if total != "*" else -1


def _unsatisfiable(exc: BaseException) -> int | None:
    """The object size an ``InvalidRange`` (416) error tells, else None."""
    info = client_error_info(exc)
    if info is None or (info[0] != "InvalidRange" and info[1] != 416):
        return None
    response = getattr(exc, "response", {})
    size = response.get("Error", {}).get("ActualObjectSize")
    if size is None:
        headers = response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        match = _TOTAL.search(headers.get("content-range", ""))
        size = match.group(1) if match else -1
    return int(size)


def _fail(attempts: Attempts, exc: BaseException, began: float, url: str) -> None:
    try:
        attempts.failed(exc)
    except OSError:
        info = client_error_info(exc)
        if hook.ENABLED:
            hook.record_request("s3", "GET", status=info[1] if info else None,
                                seconds=time.perf_counter() - began,
                                attempts=attempts.count, error=True, url=url)
        raise


def _record(began: float, status: int | None, nbytes: int, attempts: int, url: str) -> None:
    if hook.ENABLED:
        hook.record_request("s3", "GET", status=status, nbytes=nbytes,
                            seconds=time.perf_counter() - began, attempts=attempts, url=url)
