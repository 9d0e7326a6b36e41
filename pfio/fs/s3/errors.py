"""S3 errors: the error answers of S3 (:class:`ServerError`), what is worth retrying
(:func:`is_transient`), what is throttling (:func:`is_throttling`), how long the server asks
a client to wait (:func:`retry_after`) and the builtin exception each error becomes
(:func:`translate`): ``FileNotFoundError``, ``PermissionError`` or an ``OSError`` saying what
happened and how often it was tried. Errors are classified by their class
(``isinstance``): an engine raises error answers as the :class:`ServerError` subclass
:func:`server_error` picks, and a connection that broke or went silent as a
``ConnectionError`` or a ``TimeoutError`` (the ``boto3`` engine converts botocore's and
urllib3's errors to those at its edge). No IO here.

What is retried (the rest is raised at once):

* throttling: the codes of :data:`THROTTLING_CODES` (``SlowDown``, ``Throttling*``,
  ``RequestLimitExceeded``, ...), HTTP 429, 503 and 509;
* other transient answers: ``RequestTimeout`` (a 400), ``BadDigest``,
  ``XAmzContentChecksumMismatch`` and ``XAmzContentSHA256Mismatch`` (a body damaged on its
  way), ``InternalError``,
  ``OperationAborted`` and every 5xx but 501, 505, 506, 510 and 511 (they say the request
  can never succeed as sent);
* broken, refused or silent connections (``ConnectionError``, ``TimeoutError``).
"""

from __future__ import annotations

import email.utils
import errno
import os
import time
from collections.abc import Mapping

from ...trace.redact import redact

_NOT_FOUND = {"NoSuchKey", "NoSuchBucket", "NotFound", "404", "NoSuchUpload"}
_DENIED = {"AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch",
           "AllAccessDisabled", "AccountProblem"}
#: error codes that mean "slow down": retried with the longer backoff of throttling
THROTTLING_CODES = frozenset({
    "SlowDown", "Throttling", "ThrottlingException", "ThrottledException",
    "RequestThrottled", "RequestThrottledException", "TooManyRequestsException",
    "RequestLimitExceeded", "BandwidthLimitExceeded", "LimitExceededException",
    "ProvisionedThroughputExceededException", "PriorRequestNotComplete",
    "ServiceUnavailable", "EC2ThrottledException", "TransactionInProgressException",
    "429", "503", "509"})
_THROTTLING_STATUS = frozenset({429, 503, 509})
#: error codes worth another try that are not throttling
TRANSIENT_CODES = frozenset({"RequestTimeout", "RequestTimeoutException", "InternalError",
                             "OperationAborted", "500", "502", "504",
                             # a body damaged on its way: the next try sends it again
                             "BadDigest", "StoredBadDigest", "XAmzContentChecksumMismatch",
                             "XAmzContentSHA256Mismatch"})
#: 5xx answers that no retry can change (the request is not supported as sent)
_PERMANENT_5XX = frozenset({501, 505, 506, 510, 511})
_PERMANENT_CODES = frozenset({"NotImplemented", "501", "505"})
#: codes whose message is worth giving the caller (what was wrong with an answer, or with
#: the bytes the server received)
_EXPLAINED = frozenset({"UnreadableAnswer", "UnreadableListing", "BadDigest",
                        "StoredBadDigest", "XAmzContentChecksumMismatch",
                        "XAmzContentSHA256Mismatch"})
class ServerError(Exception):
    """An error answer of S3: its status, its code (the status as text when the answer
    named none), its message and its (lower-case) headers. Made by :func:`server_error`,
    as the subclass that says what it is; this class itself is an error no retry changes,
    which :func:`translate` reports as an ``OSError``."""

    def __init__(self, status: int, code: str, message: str,
                 headers: Mapping[str, str], object_size: int | None = None) -> None:
        code = code or str(status)
        super().__init__(f"{code}: {message}" if message else code)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        #: the object's size a 416 answer told in its body (``ActualObjectSize``), if any
        self.object_size = object_size


class Retryable(ServerError):
    """An answer worth another try (see the module documentation)."""


class Throttled(Retryable):
    """An answer asking the client to slow down (retried with the longer backoff)."""


class NotFound(ServerError):
    """No such key, bucket or upload: a ``FileNotFoundError`` for the caller."""


class NoSuchUpload(NotFound):
    """The multipart upload is gone (completed, or aborted)."""


class Denied(ServerError):
    """Access denied, or a signature or a key refused: a ``PermissionError``."""


class PreconditionFailed(ServerError):
    """A condition of the request (``If-Match``, ``If-None-Match: *``) does not hold."""


class RangeNotSatisfiable(ServerError):
    """A GET of a range that starts at or past the end of the object (416)."""


class BucketExists(ServerError):
    """CreateBucket of a bucket the caller owns already."""


def server_error(status: int, code: str, message: str, headers: Mapping[str, str],
                 object_size: int | None = None) -> ServerError:
    """The error S3 answered with ``status``, ``code`` ("": none) and ``message``, as the
    :class:`ServerError` subclass that says what it is (``object_size``: what a 416 told)."""
    code = code or str(status)
    return _kind(status, code)(status, code, message, headers, object_size)


def _kind(status: int, code: str) -> type[ServerError]:
    """The class of an error answer: by its code, else by its status."""
    if code == "NoSuchUpload":
        return NoSuchUpload
    if code in _NOT_FOUND or status == 404:
        return NotFound
    if code in _DENIED or status == 403:
        return Denied
    if code == "PreconditionFailed" or status == 412:
        return PreconditionFailed
    if code == "InvalidRange" or status == 416:
        return RangeNotSatisfiable
    if code == "BucketAlreadyOwnedByYou":
        return BucketExists
    if code in _PERMANENT_CODES or status in _PERMANENT_5XX:
        return ServerError
    if code in THROTTLING_CODES or status in _THROTTLING_STATUS:
        return Throttled
    if code in TRANSIENT_CODES or status >= 500:
        return Retryable
    return ServerError


class BrokenConnection(ConnectionError):
    """A connection that broke or could not be made, as a library below an engine
    (botocore, urllib3, http.client) reported it: the text names the library's error."""

    @classmethod
    def of(cls, exc: BaseException) -> BrokenConnection:
        return cls(f"{type(exc).__name__}: {exc}")


class SilentConnection(TimeoutError):
    """A connection that went silent, as a library below an engine reported it: the text
    names the library's error."""

    @classmethod
    def of(cls, exc: BaseException) -> SilentConnection:
        return cls(f"{type(exc).__name__}: {exc}")


class ProtocolError(ConnectionError):
    """An answer that breaks HTTP/1.1's syntax or framing; its connection is dropped."""


class TooSlow(TimeoutError):
    """A server that sends (or takes) bytes, but slower than the connection's floor, or
    whose head or patient answer outlasts its deadline. A retry of such a request does not
    get a fresh budget for the few bytes it brought."""


class NoSuchObjectError(FileNotFoundError):
    """``S3.remove`` of a name where nothing is: a ``FileNotFoundError`` (``errno`` ENOENT,
    ``filename`` the URL) whose message is PFIO 2.x's, ``No such S3 object: 'name'`` (the
    name as the caller gave it)."""

    path = ""

    @classmethod
    def of(cls, path: str, url: str) -> NoSuchObjectError:
        """The error for ``path`` (as given), at ``url``."""
        exc = cls(errno.ENOENT, "No such S3 object", url)
        exc.path = os.fspath(path)
        return exc

    def __str__(self) -> str:
        return f"No such S3 object: '{self.path}'"


def is_connection_error(exc: BaseException) -> bool:
    """True for a broken, refused or silent connection (no answer was read)."""
    return isinstance(exc, (ConnectionError, TimeoutError))


def is_throttling(exc: BaseException) -> bool:
    """True for an answer that asks the client to slow down (see the module documentation)."""
    return isinstance(exc, Throttled)


def is_transient(exc: BaseException) -> bool:
    """True for an error worth retrying: throttling, a transient answer (see the module
    documentation), a broken or timed-out connection."""
    return isinstance(exc, (Retryable, ConnectionError, TimeoutError))


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """The seconds the answer ``exc`` asks the client to wait before trying again: its
    ``Retry-After`` header (seconds, or an HTTP date, ``now`` being the current Unix time)
    or ``x-amz-retry-after`` (milliseconds); None when it asks for nothing (or for
    something unreadable). Never negative."""
    if not isinstance(exc, ServerError):
        return None
    headers = exc.headers
    value = headers.get("retry-after")
    if value is not None:
        text = str(value).strip()
        if text.isascii() and text.isdigit():  # delta-seconds: 1*DIGIT (RFC 9110)
            return float(text)
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # (an HTTP date is GMT)
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    value = headers.get("x-amz-retry-after")
    if value is not None:
        text = str(value).strip()
        return int(text) / 1000 if text.isascii() and text.isdigit() else None
    return None


def may_have_been_applied(exc: BaseException) -> bool:
    """Whether a request that failed with ``exc`` may have been applied by the server: no
    answer came (a broken or silent connection), a 5xx, or an error or an unreadable body
    inside a 200 (taken as a 500)."""
    return not isinstance(exc, ServerError) or not exc.status or exc.status >= 500


def translate(exc: BaseException, url: str, attempts: int = 1, note: str = "") -> OSError:
    """The builtin error for ``exc`` raised by a request on ``url`` (tried ``attempts``
    times; ``note`` is added to the message)."""
    note = f" ({note})" if note else ""
    if isinstance(exc, ServerError):
        if isinstance(exc, NotFound):
            return FileNotFoundError(errno.ENOENT, f"not found ({exc.code})", url)
        if isinstance(exc, Denied):
            return PermissionError(errno.EACCES, f"access denied ({exc.code})", url)
        if isinstance(exc, PreconditionFailed):
            return OSError(errno.EIO, "the object changed while it was open (ETag no "
                           "longer matches): reopen it", url)
        what = f"S3 error {exc.code} (HTTP {exc.status})"
        if exc.code in _EXPLAINED and exc.message:
            what += f": {redact(exc.message)}"
    else:  # its text may name the request's URL, with a presigned query string
        what = f"{type(exc).__name__}: {redact(str(exc))}"
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return OSError(errno.EIO, f"{what}{tries}{note}", url)
