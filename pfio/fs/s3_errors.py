"""S3 errors as builtin exceptions, and the retry loop every S3 request goes through.

botocore's own retries are switched off (see :mod:`pfio.fs.s3_connection`): one
loop here retries throttling, 5xx answers and broken connections with exponential backoff
and full jitter, reports every request to the tracer, and turns what is left into
``FileNotFoundError``, ``PermissionError`` or an ``OSError`` saying what happened and how
often it was tried. A botocore ``ClientError`` (or the :class:`ServerError` of the native
engine) never reaches the caller. A request that makes no progress is not retried past
``RetryPolicy.deadline`` seconds, so a server that never answers fails in bounded time.
"""

from __future__ import annotations

import errno
import http.client
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..trace import hook
from ..trace.redact import redact

logger = logging.getLogger(__name__)

T = TypeVar("T")

_NOT_FOUND = {"NoSuchKey", "NoSuchBucket", "NotFound", "404", "NoSuchUpload"}
_DENIED = {"AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch",
           "AllAccessDisabled", "AccountProblem"}
_THROTTLED = {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
              "TooManyRequestsException", "RequestTimeout",
              "InternalError", "ServiceUnavailable", "503", "500", "502", "504"}


class ServerError(Exception):
    """An error answer of S3 to a request of the native engine, shaped as botocore's
    ``ClientError`` (``response["Error"]["Code"]``, ``response["ResponseMetadata"]``)."""

    def __init__(self, status: int, code: str, message: str,
                 headers: dict[str, str]) -> None:
        super().__init__(f"{code or status}: {message}" if message else code or str(status))
        self.response = {"Error": {"Code": code or str(status), "Message": message},
                         "ResponseMetadata": {"HTTPStatusCode": status,
                                              "HTTPHeaders": headers}}


def client_error_info(exc: BaseException) -> tuple[str, int | None] | None:
    """``(code, http status)`` of a botocore ``ClientError``, None for anything else."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict) or "Error" not in response:
        return None
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code, status


def is_transient(exc: BaseException) -> bool:
    """True for an error worth retrying: throttling, 5xx, a broken or timed-out connection."""
    info = client_error_info(exc)
    if info is not None:
        code, status = info
        return code in _THROTTLED or (status is not None and status >= 500)
    if isinstance(exc, (ConnectionError, TimeoutError, http.client.HTTPException)):
        return True
    # botocore's EndpointConnectionError, ReadTimeoutError, ResponseStreamingError, ... and
    # urllib3's ProtocolError all derive from these two bases; match them by name so this
    # module needs no botocore import
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"HTTPClientError", "ConnectionError", "ProtocolError",
                         "ResponseStreamingError", "IncompleteReadError", "ReadTimeoutError",
                         "HTTPError"})


def translate(exc: BaseException, url: str, attempts: int = 1) -> OSError:
    """The builtin error for ``exc`` raised by a request on ``url``."""
    info = client_error_info(exc)
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
    else:  # its text may name the request's URL, with a presigned query string
        what = f"{type(exc).__name__}: {redact(str(exc))}"
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return OSError(errno.EIO, f"{what}{tries}", url)


@dataclass
class RetryPolicy:
    """How requests are retried: up to ``max_attempts`` tries in all, sleeping a random time
    in ``[0, min(cap, base * 2**n)]`` before retry ``n`` (exponential backoff, full jitter)."""

    max_attempts: int = 5
    base: float = 0.05
    cap: float = 2.0
    #: no retry starts when the request has made no progress for this many seconds, or
    #: would pass them by waiting ``attempt_timeout`` more (None: no deadline)
    deadline: float | None = 30.0
    #: the longest one silent attempt may take (the read timeout)
    attempt_timeout: float = 0.0

    def delay(self, retry: int) -> float:
        """Seconds to sleep before retry number ``retry`` (0 for the first retry)."""
        return random.uniform(0, min(self.cap, self.base * (2 ** retry)))


class Attempts:
    """Counts the tries of one logical request and sleeps between them.

    ``failed(exc)`` returns when the request may be tried again and raises the translated
    error when it may not.
    """

    def __init__(self, policy: RetryPolicy, what: str, url: str) -> None:
        self.policy = policy
        self.what = what
        self.url = url
        self.count = 0
        self.since = time.monotonic()

    def reset(self) -> None:
        """The request made progress: it gets its full budget of tries and time again."""
        self.count = 0
        self.since = time.monotonic()

    def failed(self, exc: BaseException) -> None:
        self.count += 1
        policy = self.policy
        late = policy.deadline is not None and time.monotonic() - self.since + \
            policy.attempt_timeout >= policy.deadline
        if not is_transient(exc) or self.count >= policy.max_attempts or late:
            raise translate(exc, self.url, self.count) from exc
        pause = self.policy.delay(self.count - 1)
        logger.debug("%s %s failed (%s: %s), attempt %d of %d; retrying in %.3fs", self.what,
                     self.url, type(exc).__name__, redact(str(exc)), self.count,
                     self.policy.max_attempts, pause)
        time.sleep(pause)


def call(policy: RetryPolicy, method: str, url: str, fn: Callable[[], T],
         nbytes: Callable[[Any], int] | None = None) -> T:
    """Run the request ``fn`` with retries; report it to the tracer as ``method``."""
    attempts = Attempts(policy, method, url)
    start = time.perf_counter()
    while True:
        try:
            result = fn()
        except Exception as exc:
            try:
                attempts.failed(exc)
            except OSError:
                if hook.ENABLED:
                    info = client_error_info(exc)
                    hook.record_request("s3", method, status=info[1] if info else None,
                                        seconds=time.perf_counter() - start,
                                        attempts=attempts.count, error=True, url=url)
                raise
            continue
        if hook.ENABLED:
            status = result.get("ResponseMetadata", {}).get("HTTPStatusCode") \
                if isinstance(result, dict) else None
            hook.record_request("s3", method, status=status,
                                nbytes=nbytes(result) if nbytes else 0,
                                seconds=time.perf_counter() - start,
                                attempts=attempts.count + 1, url=url)
        return result
