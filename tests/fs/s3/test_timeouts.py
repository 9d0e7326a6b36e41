"""Bounded waits: an endpoint that accepts connections and never answers fails, naming it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from pfio.fs.s3 import S3
from pfio.fs.s3.retry import Attempts, RetryPolicy


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


def test_a_silent_endpoint_fails_naming_it(s3_env: str, silent_endpoint: str) -> None:
    fs = S3("bucket", endpoint=silent_endpoint, read_timeout=0.3, max_attempts=2)
    with pytest.raises(OSError, match="s3://bucket/k") as info:
        fs.open("k", "rb")
    assert "127.0.0.1" in str(info.value.__cause__ or info.value)


def test_no_retry_starts_that_would_end_past_the_deadline(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr("pfio.fs.s3.retry.time.monotonic", lambda: now[0])
    monkeypatch.setattr("pfio.fs.s3.retry.time.sleep", lambda s: None)
    attempts = Attempts(RetryPolicy(max_attempts=10, deadline=30, attempt_timeout=10),
                        "GET", "s3://b/k")
    now[0] += 10
    attempts.failed(TimeoutError("silent"))  # 10 s spent: one more try fits
    now[0] += 10
    with pytest.raises(OSError, match="s3://b/k"):
        attempts.failed(TimeoutError("silent"))  # 20 s + 10 s would reach the deadline


def test_progress_renews_the_deadline(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr("pfio.fs.s3.retry.time.monotonic", lambda: now[0])
    monkeypatch.setattr("pfio.fs.s3.retry.time.sleep", lambda s: None)
    attempts = Attempts(RetryPolicy(max_attempts=10, deadline=30, attempt_timeout=10),
                        "GET", "s3://b/k")
    now[0] += 25
    attempts.reset()
    now[0] += 10
    attempts.failed(TimeoutError("silent"))  # retried: 10 s since the last progress
