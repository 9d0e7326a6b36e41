"""Retries as the best clients do them: exponential backoff with full jitter, throttling
backing off longer (and tried more often) than other errors, ``Retry-After`` honoured, a
process-wide retry budget, bounded time, and no lock held while sleeping.

The policy's sleep, clock and random source are replaced here, so tests check the delays
chosen without sleeping them; one test over real HTTP measures a ``Retry-After: 1``.
"""

from __future__ import annotations

import email.utils
import http.server
import os
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pfio.fs.s3 import S3
from pfio.fs.s3.errors import (
    ServerError,
    is_throttling,
    is_transient,
    retry_after,
    server_error,
)
from pfio.fs.s3.retry import Attempts, RetryPolicy, call, quota_for, throttle_for
from pfio.trace import hook


class FakeTime:
    """A clock that moves only when the policy sleeps (or ``advance`` is called)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def advance(self, seconds: float) -> None:
        self.now += seconds


def policy(fake: FakeTime, jitter: float = 1.0, **fields: Any) -> RetryPolicy:
    """A policy on ``fake``'s time whose random source always gives ``jitter``."""
    return RetryPolicy(sleep=fake.sleep, clock=fake.clock, random=lambda: jitter, **fields)


def error(status: int, code: str, **headers: str) -> ServerError:
    return server_error(status, code, "scripted", dict(headers))


def failing(*errors: BaseException, then: Any = None) -> Callable[[], Any]:
    """A request that raises ``errors`` in turn (the last one for ever unless ``then``
    is given, which is returned once they are spent)."""
    left = list(errors)

    def request() -> Any:
        if len(left) > 1 or (left and then is not None):
            raise left.pop(0)
        if left:
            raise left[0]
        return then

    return request


# -- backoff --------------------------------------------------------------------------------

def test_throttling_backs_off_for_tens_of_seconds_before_failing() -> None:
    fake = FakeTime()
    with pytest.raises(OSError, match=r"SlowDown \(HTTP 503\) after 10 attempts"):
        call(policy(fake), "GET", "s3://b/k", failing(error(503, "SlowDown")))
    # full jitter at its top: 1 s doubling up to the 20 s cap, 9 sleeps for 10 tries
    assert fake.sleeps == [1, 2, 4, 8, 16, 20, 20, 20, 20]
    assert sum(fake.sleeps) == 111


def test_throttling_sleeps_are_jittered_below_the_exponential_bound() -> None:
    fake = FakeTime()
    with pytest.raises(OSError):
        call(policy(fake, jitter=0.5), "GET", "s3://b/k", failing(error(503, "SlowDown")))
    assert fake.sleeps == [0.5, 1, 2, 4, 8, 10, 10, 10, 10]  # 55.5 s: the average case


@pytest.mark.parametrize("code, status", [
    ("SlowDown", 503), ("Throttling", 400), ("ThrottlingException", 400),
    ("RequestLimitExceeded", 503), ("TooManyRequestsException", 429),
    ("ServiceUnavailable", 503), ("", 429), ("", 503)])
def test_throttling_answers(code: str, status: int) -> None:
    exc = error(status, code)
    assert is_throttling(exc) and is_transient(exc)


def test_other_errors_back_off_from_50ms_and_are_tried_5_times() -> None:
    fake = FakeTime()
    with pytest.raises(OSError, match=r"InternalError \(HTTP 500\) after 5 attempts"):
        call(policy(fake), "GET", "s3://b/k", failing(error(500, "InternalError")))
    assert fake.sleeps == pytest.approx([0.05, 0.1, 0.2, 0.4])


@pytest.mark.parametrize("code, status", [
    ("RequestTimeout", 400), ("InternalError", 500), ("", 502), ("", 504),
    ("OperationAborted", 409)])
def test_transient_answers_are_retried(code: str, status: int) -> None:
    fake = FakeTime()
    assert call(policy(fake), "HEAD", "s3://b/k",
                failing(error(status, code), then="done")) == "done"
    assert len(fake.sleeps) == 1
    assert not is_throttling(error(status, code))


@pytest.mark.parametrize("code, status", [
    ("NotImplemented", 501), ("HTTPVersionNotSupported", 505), ("", 501), ("", 505),
    ("NoSuchKey", 404), ("AccessDenied", 403), ("InvalidArgument", 400)])
def test_permanent_answers_are_not_retried(code: str, status: int) -> None:
    fake = FakeTime()
    with pytest.raises(OSError) as info:
        call(policy(fake), "HEAD", "s3://b/k", failing(error(status, code)))
    assert fake.sleeps == [] and "attempts" not in str(info.value)


def test_a_mix_counts_attempts_by_the_last_error() -> None:
    fake = FakeTime()
    request = failing(*[error(500, "InternalError")] * 3, *[error(503, "SlowDown")] * 3,
                      then="done")
    assert call(policy(fake), "GET", "s3://b/k", request) == "done"
    assert len(fake.sleeps) == 6  # 4 tries of a 500 would fail; throttling allows 10


# -- Retry-After ---------------------------------------------------------------------------

def test_retry_after_seconds_is_a_floor_of_the_sleep() -> None:
    fake = FakeTime()
    request = failing(error(503, "SlowDown", **{"retry-after": "7"}), then="ok")
    assert call(policy(fake, jitter=0.0), "GET", "s3://b/k", request) == "ok"
    assert fake.sleeps == [7]


def test_retry_after_as_an_http_date() -> None:
    now = time.time()
    exc = error(503, "SlowDown", **{"retry-after": email.utils.formatdate(now + 5,
                                                                          usegmt=True)})
    assert retry_after(exc, now=now) == pytest.approx(5, abs=1)
    assert retry_after(error(503, "SlowDown", **{"retry-after": "soon"})) is None
    assert retry_after(error(503, "SlowDown", **{"x-amz-retry-after": "1500"})) == 1.5


@pytest.mark.parametrize("value", ["-3", "1e9", "+5", "5.5", " "])
def test_a_retry_after_that_is_neither_digits_nor_a_date_asks_nothing(value: str) -> None:
    assert retry_after(error(503, "SlowDown", **{"retry-after": value})) is None


def test_retry_after_is_capped() -> None:
    fake = FakeTime()
    request = failing(error(503, "SlowDown", **{"retry-after": "3600"}), then="ok")
    call(policy(fake, jitter=0.0), "GET", "s3://b/k", request)
    assert fake.sleeps == [20]


def test_a_retry_after_past_the_deadline_fails_now() -> None:
    fake = FakeTime()
    request = failing(error(500, "InternalError", **{"retry-after": "15"}), then="ok")
    with pytest.raises(OSError, match="InternalError"):
        call(policy(fake, jitter=0.0, retry_after_cap=60, deadline=10), "GET", "s3://b/k",
             request)
    assert fake.sleeps == []


# -- bounded time --------------------------------------------------------------------------

def test_an_endpoint_that_never_answers_fails_within_30_seconds() -> None:
    fake = FakeTime()
    start = fake.now

    def silent() -> None:
        fake.advance(10)  # each try waits out the 10 s read timeout
        raise TimeoutError("127.0.0.1:9 did not answer within 10 s")

    with pytest.raises(OSError, match="TimeoutError"):
        call(policy(fake, attempt_timeout=10), "GET", "s3://b/k", silent)
    assert fake.now - start <= 30


def test_a_refused_connection_fails_at_once_after_5_tries() -> None:
    fake = FakeTime()
    with pytest.raises(OSError, match="after 5 attempts"):
        call(policy(fake), "GET", "s3://b/k", failing(ConnectionRefusedError("refused")))
    assert sum(fake.sleeps) < 1


def test_throttling_has_a_time_budget_too() -> None:
    fake = FakeTime()

    def slow_throttle() -> None:
        fake.advance(10)
        raise error(503, "SlowDown")

    with pytest.raises(OSError, match="SlowDown"):
        call(policy(fake, attempt_timeout=10), "GET", "s3://b/k", slow_throttle)
    assert 30 < fake.now - 1000 <= 120


# -- the options of S3 ---------------------------------------------------------------------

def test_default_policy_of_s3(s3_env: str) -> None:
    retry = S3("b", read_timeout=7)._retry
    assert (retry.max_attempts, retry.throttle_attempts) == (5, 10)
    assert (retry.base, retry.base * retry.throttle_scale, retry.cap) == (0.05, 1.0, 20.0)
    assert (retry.deadline, retry.throttle_deadline, retry.attempt_timeout) == (30, 120, 7)
    assert (retry.quota, retry.retry_cost, retry.timeout_cost) == (500, 5, 10)


def test_max_attempts_bounds_every_kind_of_retry(s3_env: str) -> None:
    retry = S3("b", max_attempts=3)._retry
    assert (retry.max_attempts, retry.throttle_attempts) == (3, 3)
    assert S3("b", max_attempts=0)._retry.max_attempts == 1


def test_a_whole_policy_may_be_given(s3_env: str) -> None:
    given = RetryPolicy(base=0.2, throttle_attempts=4, deadline=None)
    fs = S3("b", retry=given, read_timeout=3)
    assert fs._retry is fs.connection.retry and fs._retry is not given
    assert (fs._retry.base, fs._retry.throttle_attempts, fs._retry.deadline) == \
        (0.2, 4, None)
    assert fs._retry.attempt_timeout == 3 and given.attempt_timeout == 0


def test_the_policy_pickles_without_its_budget(s3_env: str) -> None:
    fs = S3("b")
    assert quota_for(fs._retry) is not None  # (cached on the policy, with a lock)
    copy = pickle.loads(pickle.dumps(fs))
    assert copy._retry == fs._retry and quota_for(copy._retry) is quota_for(fs._retry)


def test_the_policy_repr_shows_no_settings(s3_env: str) -> None:
    fs = S3("b", aws_access_key_id="AKIAREPRKEY000000000", aws_secret_access_key="s3cr3t")
    assert "AKIAREPRKEY" not in repr(fs._retry) and "s3cr3t" not in repr(fs._retry)


# -- the retry budget ------------------------------------------------------------------------

def scoped(fake: FakeTime, scope: str, **fields: Any) -> RetryPolicy:
    return policy(fake, scope=f"{scope}-{os.urandom(4).hex()}", **fields)


def test_the_budget_stops_retries_and_successes_refill_it() -> None:
    fake = FakeTime()
    retry = scoped(fake, "budget", quota=10, retry_cost=5)
    quota = quota_for(retry)
    assert quota is not None and quota.level == 10
    # a request that succeeds at its third try took 10 tokens and gives the last 5 back
    call(retry, "GET", "s3://b/k", failing(error(500, "InternalError"),
                                           error(500, "InternalError"), then="ok"))
    assert quota.level == 5
    # a request that keeps failing gets one retry, then the budget is spent
    with pytest.raises(OSError, match="after 2 attempts .*retry budget of this endpoint is "
                       "spent"):
        call(retry, "GET", "s3://b/k", failing(error(500, "InternalError")))
    assert quota.level == 0
    for _ in range(5):  # successes without a retry give one token each
        call(retry, "GET", "s3://b/k", lambda: "ok")
    assert quota.level == 5
    # a throttled retry takes no tokens (the endpoint's pause bounds throttling)
    call(retry, "GET", "s3://b/k", failing(error(503, "SlowDown"), then="ok"))
    assert quota.level == 6


def test_timeouts_cost_more() -> None:
    fake = FakeTime()
    retry = scoped(fake, "timeouts", quota=500)
    quota = quota_for(retry)
    with pytest.raises(OSError):
        call(retry, "GET", "s3://b/k", failing(TimeoutError("silent")))
    assert quota.level == 500 - 4 * 10


def test_a_storm_across_threads_is_not_amplified() -> None:
    fake = FakeTime()
    retry = scoped(fake, "storm", quota=100, retry_cost=5)
    retry.sleep = lambda s: None
    tries = []

    def throttled() -> None:
        tries.append(1)
        raise error(500, "InternalError")

    def one() -> None:
        with pytest.raises(OSError, match="InternalError"):
            call(retry, "GET", "s3://b/k", throttled)

    threads = [threading.Thread(target=one) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # 16 first tries and 100 / 5 = 20 retries in all, not 16 * 9
    assert len(tries) == 16 + 20
    assert quota_for(retry).level == 0


def test_the_budget_is_shared_by_filesystems_of_equal_settings(s3_env: str) -> None:
    assert quota_for(S3("a")._retry) is quota_for(S3("b")._retry)
    assert quota_for(S3("a")._retry) is not quota_for(S3("a", read_timeout=3)._retry)


def test_a_forked_child_starts_with_a_full_budget() -> None:
    retry = scoped(FakeTime(), "fork")
    quota = quota_for(retry)
    quota.take(100)
    pid = os.fork()
    if pid == 0:  # the child
        fresh = quota_for(retry)
        os._exit(0 if fresh is not quota and fresh.level == fresh.capacity else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert quota_for(retry) is quota and quota.level == 400


def test_progress_gives_back_the_retry_tokens() -> None:
    fake = FakeTime()
    retry = scoped(fake, "progress")
    attempts = Attempts(retry, "GET", "s3://b/k")
    attempts.failed(ConnectionResetError("cut"))
    assert quota_for(retry).level == 490
    attempts.reset()  # the resumed GET brought bytes
    assert quota_for(retry).level == 500


# -- no lock held while sleeping ---------------------------------------------------------------

def test_a_sleeping_retry_does_not_hold_up_other_threads() -> None:
    release = threading.Event()
    sleeping = threading.Event()
    retry = RetryPolicy(scope=f"locks-{os.urandom(4).hex()}", random=lambda: 1.0)

    def sleep(seconds: float) -> None:
        if threading.current_thread().name == "throttled":
            sleeping.set()
            release.wait(30)

    retry.sleep = sleep
    result: list[Any] = []
    throttled = threading.Thread(
        target=lambda: result.append(call(retry, "GET", "s3://b/slow", failing(
            error(503, "SlowDown"), then="late"))), name="throttled")
    throttled.start()
    assert sleeping.wait(10)
    started = time.monotonic()
    # meanwhile, another thread's requests fail, retry and succeed through the same budget
    for _ in range(3):
        assert call(retry, "GET", "s3://b/fast", failing(ConnectionResetError("cut"),
                                                         then="fast")) == "fast"
    assert time.monotonic() - started < 5 and not result
    release.set()
    throttled.join(10)
    assert result == ["late"]


# -- the tracer ------------------------------------------------------------------------------

class Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple] = []

    def request(self, *args: object) -> None:
        self.requests.append(args)


def test_call_reports_attempts_to_the_tracer(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = Recorder()
    monkeypatch.setattr(hook, "ENABLED", True)
    monkeypatch.setattr(hook, "_recorder", rec)
    fake = FakeTime()
    call(policy(fake), "PUT", "s3://b/k", failing(error(503, "SlowDown"),
                                                  error(503, "SlowDown"), then={}))
    with pytest.raises(OSError):
        call(policy(fake), "HEAD", "s3://b/k", failing(error(501, "NotImplemented")))
    (put, head) = rec.requests
    assert (put[1], put[5], put[6]) == ("PUT", 3, False)
    assert (head[1], head[2], head[5], head[6]) == ("HEAD", 501, 1, True)


# -- over HTTP ---------------------------------------------------------------------------------

class _Throttling(http.server.BaseHTTPRequestHandler):
    """Answers HEAD requests: the first one 503 SlowDown with ``Retry-After: 1``, the
    others 200 (an object of 5 bytes)."""

    protocol_version = "HTTP/1.1"
    times: list[float]

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        self.times.append(time.monotonic())
        if len(self.times) == 1:
            body = b"<Error><Code>SlowDown</Code><Message>slow</Message></Error>"
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()  # (a HEAD answer has no body)
            return
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.send_header("ETag", '"0123456789abcdef0123456789abcdef"')
        self.send_header("Last-Modified", email.utils.formatdate(usegmt=True))
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def throttling_server() -> Iterator[tuple[str, list[float]]]:
    times: list[float] = []
    handler = type("Handler", (_Throttling,), {"times": times})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", times
    server.shutdown()
    server.server_close()


def test_retry_after_is_waited_for_over_http(throttling_server, s3_engine: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint, times = throttling_server
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "pfio-test-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "pfio-test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    fs = S3("bucket", endpoint=endpoint, engine=s3_engine)
    fs._retry.random = lambda: 0.0  # no backoff of its own: only Retry-After makes it wait
    assert fs.stat("k").size == 5
    assert len(times) == 2
    assert times[1] - times[0] >= 0.9


def test_throttling_over_http_is_tried_10_times(s3_env: str, s3_bucket: str,
                                                fault_proxy) -> None:
    fs = S3(s3_bucket, endpoint=fault_proxy.endpoint)
    fake = FakeTime()
    fs._retry.sleep, fs._retry.clock, fs._retry.random = fake.sleep, fake.clock, lambda: 0.5
    fault_proxy.fail_next(100)
    with pytest.raises(OSError, match=r"\(HTTP 503\) after 10 attempts"):
        fs.stat("k")  # (a HEAD: its answer has no body, no code, but a status)
    assert fault_proxy.failed == 10
    assert sum(fake.sleeps) == 55.5


def test_a_read_that_succeeds_after_a_retry_gives_its_tokens_back(
        s3_env: str, s3_bucket: str, fault_proxy) -> None:
    fs = S3(s3_bucket, endpoint=fault_proxy.endpoint)
    with fs.open("k", "wb") as f:
        f.write(b"hello")
    fs._retry.sleep = lambda seconds: None
    quota = quota_for(fs._retry)
    # the quota is the process's: earlier tests may have left it below its capacity, and
    # successes then refill it; the test starts full to see only this read's tokens
    quota.level = quota.capacity
    fault_proxy.fail_next(1)
    with fs.open("k", "rb") as f:
        assert f.read() == b"hello"
    assert fault_proxy.failed == 1
    assert quota.level == quota.capacity


# -- endpoint pauses -------------------------------------------------------------------------

def test_throttling_pauses_new_requests_to_the_endpoint_too() -> None:
    fake = FakeTime()
    retry = scoped(fake, "pause")
    throttle = throttle_for(retry)
    assert throttle is not None and throttle_for(scoped(fake, "other")) is not throttle
    call(retry, "PUT", "s3://b/k1", failing(error(503, "SlowDown"), then="ok"))
    assert fake.sleeps == [1.0] and throttle.level == 0  # the success reset it
    throttle.pause(retry, None)  # another thread's request is throttled now
    call(retry, "PUT", "s3://b/k2", lambda: "ok")  # a new request waits for the pause
    assert fake.sleeps == [1.0, 1.0]


def test_answers_during_a_pause_do_not_lengthen_it_later_ones_do() -> None:
    fake = FakeTime()
    retry = scoped(fake, "escalate")
    throttle = throttle_for(retry)
    end = throttle.pause(retry, None)
    assert throttle.pause(retry, None) == end == fake.now + 1  # sent before it began
    fake.advance(1)
    assert throttle.pause(retry, None) == fake.now + 2 and throttle.level == 2
    # a Retry-After longer than the pause lengthens it
    assert throttle.pause(retry, 5.0) == fake.now + 5


def test_throttled_retries_leave_the_budget_alone() -> None:
    fake = FakeTime()
    retry = scoped(fake, "free", quota=20, retry_cost=5)
    for _ in range(8):
        call(retry, "PUT", "s3://b/k", failing(*[error(503, "SlowDown")] * 5, then="ok"))
    assert quota_for(retry).level == 20


def test_the_pause_is_per_process(s3_env: str) -> None:
    retry = S3("b")._retry
    throttle_for(retry).pause(retry, None)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if throttle_for(retry).until == 0 else 1)
    _, status = os.waitpid(pid, 0)
    throttle_for(retry).until, throttle_for(retry).level = 0.0, 0
    assert os.WEXITSTATUS(status) == 0
