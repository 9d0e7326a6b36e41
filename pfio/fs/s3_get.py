"""Ranged GETs that survive throttling and broken connections.

:func:`get_range` asks for one byte range and returns exactly those bytes: when the
connection breaks in the middle of the body, the next attempt asks only for the bytes not
received yet, so every byte reaches the caller exactly once. A try that received some
bytes before the connection broke does not count against ``max_attempts``. Bodies are read
straight into the caller's buffer where the HTTP stack allows it (no intermediate copy).
"""

from __future__ import annotations

import http.client
import re
import time
from typing import TYPE_CHECKING, Any

from ..trace import hook
from .s3_errors import Attempts, client_error_info

if TYPE_CHECKING:
    from .s3 import S3

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_TOTAL = re.compile(r"/(\d+)")


class _ShortBody(http.client.HTTPException):
    """The body ended before its announced length (a cut connection)."""


def get_range(fs: S3, key: str, start: int, stop: int | None = None,
              into: memoryview | None = None) -> tuple[Any, int]:
    """GET bytes ``[start, stop)`` of ``key`` (``stop=None``: to the end; ``start < 0``: the
    last ``-start`` bytes) and the object's total size.

    With ``into`` the bytes are written into that buffer and a memoryview of the filled
    part is returned; otherwise ``bytes``. A range starting at or beyond the end gives
    empty data (and still the size).

    Raises:
        FileNotFoundError, PermissionError, OSError: see :mod:`pfio.fs.s3_errors`.
    """
    url = fs._url(key)
    attempts = Attempts(fs._retry, "GET", url)
    began = time.perf_counter()
    client = fs._client()
    progress = _Progress()
    first = length = total = -1
    while True:
        if first < 0:
            rng = f"bytes={start}-" if start >= 0 else f"bytes={start}"
            if start >= 0 and stop is not None:
                rng += str(stop - 1)
        else:
            rng = f"bytes={first + progress.got}-{first + length - 1}"
        try:
            response = client.get_object(Bucket=fs.bucket, Key=key, Range=rng)
        except Exception as exc:
            size = _unsatisfiable(exc)
            if size is not None:
                if size < 0 and start <= 0:
                    size = 0  # nothing at byte 0 or at the end: an empty object (Ceph tells
                    # no size)
                _record(began, 416, 0, attempts.count + 1, url)
                return (into[:0] if into is not None else b""), size
            _fail(attempts, exc, began, url)
            continue
        body = response["Body"]
        if first < 0:
            first, length, total = _extent(response)
            if into is not None:
                into = into[:length]
        before = progress.got
        try:
            _read_body(body, length, into, progress)
        except Exception as exc:
            _discard(body)
            if progress.got > before:
                attempts.count = 0  # a try that brought bytes does not use up the budget
            _fail(attempts, exc, began, url)
            continue
        _record(began, response["ResponseMetadata"].get("HTTPStatusCode"), progress.got,
                attempts.count + 1, url)
        if into is not None:
            return into, total
        chunks = progress.chunks
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), total


def _extent(response: dict[str, Any]) -> tuple[int, int, int]:
    """(first byte, length, total size) of a GET response."""
    length = int(response.get("ContentLength", 0))
    match = _CONTENT_RANGE.match(response.get("ContentRange") or "")
    if match is None:  # a whole object (200)
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


class _Progress:
    """Bytes of the range received so far (kept when a read breaks off)."""

    __slots__ = ("got", "chunks")

    def __init__(self) -> None:
        self.got = 0
        self.chunks: list[bytes] = []


def _read_body(body: Any, length: int, into: memoryview | None, progress: _Progress) -> None:
    """Read the rest of ``body``: the bytes ``[progress.got, length)`` of the range."""
    raw = getattr(body, "_raw_stream", None)
    fp = getattr(raw, "_fp", None)
    direct = isinstance(fp, http.client.HTTPResponse) and \
        not raw.headers.get("content-encoding")
    while progress.got < length:
        got = progress.got
        if into is not None:
            if direct:
                n = fp.readinto(into[got:length])
            else:
                data = body.read(min(length - got, 1 << 20))
                n = len(data)
                into[got:got + n] = data
        else:
            data = fp.read(length - got) if direct else body.read(min(length - got, 1 << 20))
            n = len(data)
            if n:
                progress.chunks.append(data)
        if n == 0:
            raise _ShortBody(f"body ended after {got} of {length} bytes")
        progress.got = got + n
    if direct:
        raw.release_conn()  # the connection goes back to the pool


def _discard(body: Any) -> None:
    try:
        body.close()
    except Exception:  # noqa: BLE001 - the connection is broken already
        pass


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
