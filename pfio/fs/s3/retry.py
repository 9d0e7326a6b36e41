"""The retry loop every S3 request goes through.

botocore's own retries are switched off (see :mod:`pfio.fs.s3.connection`): one loop here
retries what :func:`pfio.fs.s3.errors.is_transient` calls worth it, reports every request to
the tracer, and raises what is left as the builtin error :func:`pfio.fs.s3.errors.translate`
gives. How (:class:`RetryPolicy`, defaults in brackets):

* **Backoff**: exponential with full jitter, a random sleep in ``[0, min(cap, b * 2**n))``
  before retry ``n`` (0 for the first), where ``b`` is ``base`` (50 ms) for errors and
  broken connections and ``base * throttle_scale`` (1 s) for throttling, and ``cap`` is 20 s.
  A request is tried ``max_attempts`` times (5) in all, or ``throttle_attempts`` times (10)
  while the server throttles it: about 55 s of sleep on average before a request that is
  throttled every time fails, at most 111 s.
* **Retry-After**: an answer's ``Retry-After`` (seconds or an HTTP date) or
  ``x-amz-retry-after`` (milliseconds) makes the sleep at least that long, up to
  ``retry_after_cap`` (20 s).
* **Bounded time**: no retry starts that would pass ``deadline`` (30 s) since the request
  last made progress, counting the sleep and one more ``attempt_timeout`` (the read
  timeout), so an endpoint that never answers fails within 30 s. An endpoint that answers
  "slow down" is given ``throttle_deadline`` (120 s) instead.
* **Retry budget**: the retries of one process to one endpoint (equal
  ``S3Settings``: the policy's ``scope``) draw on a shared :class:`RetryQuota` of
  ``quota`` tokens (500): 5 per retry, 10 per retry after a broken or silent connection. A
  request that succeeds gives back what its last retry took, or 1 token when it needed
  none. When the bucket is empty, failures are raised at once: a storm of failures across
  threads is not multiplied by retries, and it ends with the first successes.
* **Endpoint pauses**: a throttling answer (SlowDown, 503, ...) pauses the whole endpoint
  (the policy's ``scope``: a shared :class:`Throttle`): every request of the process to it,
  new ones and retries, waits until the pause ends, so all threads back off together
  rather than each spending the budget. The pause is the throttling backoff above, its
  exponent counted for the endpoint (each throttling answer that arrives after a pause
  ended starts a longer one; answers to requests sent before it don't lengthen it) and
  reset by a success. Throttled retries take no tokens from the retry budget: they are
  bounded by ``throttle_attempts`` and ``throttle_deadline``, and the pause keeps them from
  multiplying.

These follow botocore's "standard" retry mode (jittered exponential backoff capped at 20 s,
throttling backing off from 1 s and other errors from 50 ms, a retry quota of 500 tokens),
with more tries and a time budget for throttling: a training job would rather wait a minute
for S3 to scale a hot prefix than fail.

The sleep happens with no lock held (the quota's lock is held only to count tokens), so
threads never wait for each other's backoff.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...trace import hook
from ...trace.redact import redact
from .engine import Answer
from .errors import (
    ServerError,
    is_connection_error,
    is_throttling,
    is_transient,
    retry_after,
    translate,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RetryQuota:
    """A token bucket: retries take tokens, successes give some back (see the module
    documentation). Thread-safe; its lock is never held while anyone sleeps."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.level = capacity
        self._lock = threading.Lock()

    def take(self, cost: int) -> bool:
        """Take ``cost`` tokens for a retry; False (nothing taken) when too few are left."""
        with self._lock:
            if self.level < cost:
                return False
            self.level -= cost
            return True

    def give(self, amount: int) -> None:
        """Give ``amount`` tokens back (the bucket holds at most ``capacity``)."""
        if self.level >= self.capacity:
            return  # full: the common case costs no lock
        with self._lock:
            self.level = min(self.capacity, self.level + amount)

    def __repr__(self) -> str:
        return f"RetryQuota({self.level}/{self.capacity})"


class Throttle:
    """The pause of one endpoint (see the module documentation). Thread-safe; its lock is
    never held while anyone sleeps."""

    def __init__(self) -> None:
        #: when the pause ends (the policy's clock)
        self.until = 0.0
        #: throttling answers since the last success, counted once per pause
        self.level = 0
        self._lock = threading.Lock()

    def pause(self, policy: RetryPolicy, asked: float | None) -> float:
        """A throttling answer: start a pause unless one is on; returns when it ends."""
        with self._lock:
            now = policy.now()
            if now >= self.until:
                self.until = now + policy.delay(self.level, True, asked)
                self.level += 1
                logger.warning("S3 throttles requests: every request to this endpoint "
                               "waits %.2fs", self.until - now)
            elif asked is not None:
                self.until = max(self.until, now + min(asked, policy.retry_after_cap))
            return self.until

    def wait(self, policy: RetryPolicy) -> None:
        """Sleep until the pause ends (at once when there is none)."""
        left = self.until - policy.now()
        if left > 0:
            (policy.sleep or time.sleep)(left)

    def resume(self) -> None:
        """A request succeeded: the next pause starts from the shortest again."""
        if self.level:
            with self._lock:
                self.level = 0

    def __repr__(self) -> str:
        return f"Throttle(level={self.level})"


#: the quotas and throttles of this process, by (scope, capacity) and by scope; a forked
#: child starts with full quotas and no pause
_quotas: dict[tuple[Hashable, int], RetryQuota] = {}
_throttles: dict[Hashable, Throttle] = {}
_quotas_lock = threading.Lock()
_generation = 0


def _forget_quotas() -> None:
    global _quotas, _throttles, _quotas_lock, _generation
    _quotas, _throttles, _quotas_lock = {}, {}, threading.Lock()
    _generation += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_quotas)


def quota_for(policy: RetryPolicy) -> RetryQuota | None:
    """The process-wide retry quota of ``policy`` (shared by the policies of one
    ``scope``); None without a scope or with ``quota=0``."""
    cached = policy._quota
    if cached is not None and cached[0] == _generation:
        return cached[1]
    if policy.scope is None or policy.quota <= 0:
        return None
    key = (policy.scope, policy.quota)
    quota = _quotas.get(key)
    if quota is None:
        with _quotas_lock:
            quota = _quotas.setdefault(key, RetryQuota(policy.quota))
    policy._quota = (_generation, quota)
    return quota


def throttle_for(policy: RetryPolicy) -> Throttle | None:
    """The pause shared by the policies of ``policy``'s ``scope``; None without a scope."""
    cached = policy._throttle
    if cached is not None and cached[0] == _generation:
        return cached[1]
    if policy.scope is None:
        return None
    throttle = _throttles.get(policy.scope)
    if throttle is None:
        with _quotas_lock:
            throttle = _throttles.setdefault(policy.scope, Throttle())
    policy._throttle = (_generation, throttle)
    return throttle


@dataclass
class RetryPolicy:
    """How requests are retried; see the module documentation for what each field does.

    ``sleep``, ``clock`` (monotonic seconds) and ``random`` (uniform in ``[0, 1)``) may be
    replaced, for tests; None means :func:`time.sleep`, :func:`time.monotonic` and
    :func:`random.random`.
    """

    #: tries in all of a request that fails with an error or a broken connection
    max_attempts: int = 5
    #: tries in all of a request while the server throttles it
    throttle_attempts: int = 10
    #: the first backoff of errors and broken connections, in seconds
    base: float = 0.05
    #: throttling backs off this many times longer than other errors (1 s at first)
    throttle_scale: float = 20.0
    #: the longest backoff, in seconds
    cap: float = 20.0
    #: the longest wait a ``Retry-After`` answer may impose, in seconds
    retry_after_cap: float = 20.0
    #: no retry starts when the request has made no progress for this many seconds, or
    #: would pass them by sleeping and waiting ``attempt_timeout`` more (None: no deadline)
    deadline: float | None = 30.0
    #: the same for a request the server keeps throttling
    throttle_deadline: float | None = 120.0
    #: the longest one silent attempt may take (the read timeout)
    attempt_timeout: float = 0.0
    #: tokens of the retry budget shared by the policies of one ``scope`` (0: no budget)
    quota: int = 500
    #: tokens a retry takes from the budget
    retry_cost: int = 5
    #: tokens a retry after a broken or silent connection takes
    timeout_cost: int = 10
    #: what shares a retry budget (the connection sets its ``S3Settings``); None: no budget
    scope: Hashable = field(default=None, repr=False, compare=False)
    sleep: Callable[[float], Any] | None = field(default=None, repr=False, compare=False)
    clock: Callable[[], float] | None = field(default=None, repr=False, compare=False)
    random: Callable[[], float] | None = field(default=None, repr=False, compare=False)
    _quota: tuple[int, RetryQuota] | None = field(default=None, init=False, repr=False,
                                                 compare=False)
    _throttle: tuple[int, Throttle] | None = field(default=None, init=False, repr=False,
                                                  compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_quota"] = state["_throttle"] = None  # (locks: each process finds its own)
        return state

    def now(self) -> float:
        """Monotonic seconds (``clock``)."""
        return (self.clock or time.monotonic)()

    def backoff(self, retry: int, throttled: bool = False) -> float:
        """The longest sleep before retry number ``retry`` (0 for the first)."""
        base = self.base * (self.throttle_scale if throttled else 1.0)
        return min(self.cap, base * (2.0 ** min(retry, 64)))

    def delay(self, retry: int, throttled: bool = False,
              asked: float | None = None) -> float:
        """Seconds to sleep before retry number ``retry`` (0 for the first): a random
        time up to :meth:`backoff`, at least ``asked`` (a ``Retry-After``, capped at
        ``retry_after_cap``)."""
        pause = (self.random or random.random)() * self.backoff(retry, throttled)
        if asked is not None:
            pause = max(pause, min(asked, self.retry_after_cap))
        return pause


class Attempts:
    """Counts the tries of one logical request and sleeps between them.

    ``failed(exc)`` returns when the request may be tried again (after sleeping) and raises
    the translated error when it may not; ``succeeded()`` tells the retry budget that the
    request is done. An ``Attempts`` dropped without either counts as a success. Made while
    the endpoint is paused (see the module documentation), it waits for the pause to end.
    """

    def __init__(self, policy: RetryPolicy, what: str, url: str) -> None:
        self.policy = policy
        self.what = what
        self.url = url
        self.count = 0
        self._held = 0  # tokens the latest retry took from the budget
        self._over = False
        self._throttle = throttle_for(policy)
        if self._throttle is not None:
            self._throttle.wait(policy)
        self.since = policy.now()

    def reset(self) -> None:
        """The request made progress: it gets its full budget of tries and time again
        (and the tokens of its retry go back to the retry budget)."""
        self.count = 0
        self.since = self.policy.now()
        if self._held:
            quota = quota_for(self.policy)
            if quota is not None:
                quota.give(self._held)
            self._held = 0

    def failed(self, exc: BaseException) -> None:
        """Account for a failed try: sleep and return when another may start, else raise
        the builtin error for ``exc`` (see :func:`pfio.fs.s3.errors.translate`)."""
        self.count += 1
        policy = self.policy
        if not is_transient(exc):
            self._give_up(exc)
        throttled = is_throttling(exc)
        limit = policy.throttle_attempts if throttled else policy.max_attempts
        if self.count >= limit:
            self._give_up(exc)
        if throttled and self._throttle is not None:
            pause = max(0.0, self._throttle.pause(policy, retry_after(exc)) - policy.now())
        else:
            pause = policy.delay(self.count - 1, throttled, retry_after(exc))
        budget = policy.throttle_deadline if throttled else policy.deadline
        if budget is not None and \
                policy.now() - self.since + pause + policy.attempt_timeout >= budget:
            self._give_up(exc)
        quota = quota_for(policy)
        if quota is not None and not (throttled and self._throttle is not None):
            cost = policy.timeout_cost if is_connection_error(exc) else policy.retry_cost
            if not quota.take(cost):
                self._give_up(exc, "not retried: the retry budget of this endpoint is spent")
            self._held = cost
        logger.debug("%s %s failed (%s: %s), attempt %d of %d; retrying in %.3fs", self.what,
                     self.url, type(exc).__name__, redact(str(exc)), self.count, limit, pause)
        if pause > 0:
            (policy.sleep or time.sleep)(pause)  # (no lock is held here)

    def succeeded(self) -> None:
        """The request succeeded: give the retry budget back what its last retry took, or
        one token when it needed none."""
        if self._over:
            return
        self._over = True
        if self._throttle is not None:
            self._throttle.resume()
        quota = quota_for(self.policy)
        if quota is not None:
            quota.give(self._held or 1)

    def _give_up(self, exc: BaseException, note: str = "") -> None:
        self._over = True
        raise translate(exc, self.url, self.count, note) from exc


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
                    hook.record_request("s3", method, status=status_of(exc),
                                        seconds=time.perf_counter() - start,
                                        attempts=attempts.count, error=True, url=url)
                raise
            continue
        attempts.succeeded()
        if hook.ENABLED:
            status = result.status if isinstance(result, Answer) else None
            hook.record_request("s3", method, status=status,
                                nbytes=nbytes(result) if nbytes else 0,
                                seconds=time.perf_counter() - start,
                                attempts=attempts.count + 1, url=url)
        return result


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an error answer (what the tracer records), None when no answer
    came."""
    return exc.status if isinstance(exc, ServerError) and exc.status else None
