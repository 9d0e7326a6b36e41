"""The retry loop every S3 request goes through.

botocore's own retries are switched off (see :mod:`pfio.fs.s3.connection`): one loop here
retries throttling, 5xx answers and broken connections with exponential backoff and full
jitter, reports every request to the tracer, and raises what is left as the builtin error
:func:`pfio.fs.s3.errors.translate` gives. A request that makes no progress is not retried
past ``RetryPolicy.deadline`` seconds, so a server that never answers fails in bounded time.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ...trace import hook
from ...trace.redact import redact
from .errors import client_error_info, is_transient, translate

logger = logging.getLogger(__name__)

T = TypeVar("T")


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
