"""S3 errors: the error answers of S3 (:class:`ServerError`), what is worth retrying
(:func:`is_transient`), what is throttling (:func:`is_throttling`), how long the server asks
a client to wait (:func:`retry_after`) and the builtin exception each error becomes
(:func:`translate`): ``FileNotFoundError``, ``PermissionError`` or an ``OSError`` saying what
happened and how often it was tried. A botocore ``ClientError`` (or a :class:`ServerError`)
never reaches the caller. No IO here.

What is retried (the rest is raised at once):

* throttling: the codes of :data:`THROTTLING_CODES` (``SlowDown``, ``Throttling*``,
  ``RequestLimitExceeded``, ...), HTTP 429, 503 and 509;
* other transient answers: ``RequestTimeout`` (a 400), ``BadDigest``,
  ``XAmzContentChecksumMismatch`` and ``XAmzContentSHA256Mismatch`` (a body damaged on its
  way), ``InternalError``,
  ``OperationAborted`` and every 5xx but 501, 505, 506, 510 and 511 (they say the request
  can never succeed as sent);
* broken, refused or silent connections (``ConnectionError``, ``TimeoutError`` and their
  botocore, urllib3 and http.client cousins).
"""

from __future__ import annotations

import email.utils
import errno
import os
import time
from typing import Any

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
#: the names of exception classes (and bases) of broken or silent connections in botocore,
#: urllib3 and http.client, matched by name so that this module imports none of them
_CONNECTION_ERRORS = frozenset({
    "HTTPClientError", "ConnectionError", "ProtocolError", "ResponseStreamingError",
    "IncompleteReadError", "ReadTimeoutError", "ConnectTimeoutError", "HTTPError",
    "HTTPException"})


class ServerError(Exception):
    """An error answer of S3 to a request of the native engine, shaped as botocore's
    ``ClientError`` (``response["Error"]["Code"]``, ``response["ResponseMetadata"]`` with
    the status and the lower-case headers of the answer, ``Retry-After`` among them)."""

    def __init__(self, status: int, code: str, message: str,
                 headers: dict[str, str]) -> None:
        super().__init__(f"{code or status}: {message}" if message else code or str(status))
        self.response: dict[str, Any] = {"Error": {"Code": code or str(status), "Message": message},
                         "ResponseMetadata": {"HTTPStatusCode": status,
                                              "HTTPHeaders": headers}}

    @property
    def status(self) -> int:
        """The HTTP status of the answer."""
        status: int = self.response["ResponseMetadata"]["HTTPStatusCode"]
        return status

    @property
    def headers(self) -> dict[str, str]:
        """The (lower-case) headers of the answer."""
        headers: dict[str, str] = self.response["ResponseMetadata"]["HTTPHeaders"]
        return headers


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


def client_error_info(exc: BaseException) -> tuple[str, int | None] | None:
    """``(code, http status)`` of a botocore ``ClientError`` (or a :class:`ServerError`),
    None for anything else."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict) or "Error" not in response:
        return None
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code, status


def _headers(exc: BaseException) -> dict[str, Any]:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return {}
    headers = response.get("ResponseMetadata", {}).get("HTTPHeaders")
    return headers if isinstance(headers, dict) else {}


def is_connection_error(exc: BaseException) -> bool:
    """True for a broken, refused or silent connection (no answer was read)."""
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & _CONNECTION_ERRORS)


def is_throttling(exc: BaseException) -> bool:
    """True for an answer that asks the client to slow down (see the module documentation)."""
    info = client_error_info(exc)
    if info is None:
        return False
    code, status = info
    return code in THROTTLING_CODES or status in _THROTTLING_STATUS


def is_transient(exc: BaseException) -> bool:
    """True for an error worth retrying: throttling, a transient answer (see the module
    documentation), a broken or timed-out connection."""
    info = client_error_info(exc)
    if info is not None:
        code, status = info
        if code in _PERMANENT_CODES or status in _PERMANENT_5XX:
            return False
        return code in THROTTLING_CODES or code in TRANSIENT_CODES or \
            (status is not None and (status >= 500 or status in _THROTTLING_STATUS))
    return is_connection_error(exc)


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """The seconds the answer ``exc`` asks the client to wait before trying again: its
    ``Retry-After`` header (seconds, or an HTTP date, ``now`` being the current Unix time)
    or ``x-amz-retry-after`` (milliseconds); None when it asks for nothing (or for
    something unreadable). Never negative."""
    headers = _headers(exc)
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
    info = client_error_info(exc)
    return info is None or info[1] is None or info[1] >= 500


def translate(exc: BaseException, url: str, attempts: int = 1, note: str = "") -> OSError:
    """The builtin error for ``exc`` raised by a request on ``url`` (tried ``attempts``
    times; ``note`` is added to the message)."""
    info = client_error_info(exc)
    note = f" ({note})" if note else ""
    if info is not None:
        code, status = info
        if code in _NOT_FOUND or status == 404:
            return FileNotFoundError(errno.ENOENT, f"not found ({code})", url)
        if code in _DENIED or status == 403:
            return PermissionError(errno.EACCES, f"access denied ({code})", url)
        if code == "PreconditionFailed" or status == 412:
            return OSError(errno.EIO, "the object changed while it was open (ETag no "
                           "longer matches): reopen it", url)
        what = f"S3 error {code} (HTTP {status})"
        if code in _EXPLAINED:
            message = str(getattr(exc, "response", {}).get("Error", {}).get("Message") or "")
            what += f": {redact(message)}" if message else ""
    else:  # its text may name the request's URL, with a presigned query string
        what = f"{type(exc).__name__}: {redact(str(exc))}"
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return OSError(errno.EIO, f"{what}{tries}{note}", url)
