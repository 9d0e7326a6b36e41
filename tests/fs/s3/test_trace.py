"""S3 requests are reported to the tracer hook, without credentials."""

from __future__ import annotations

import os

import pytest

from pfio.fs.s3 import S3
from pfio.trace import hook


class Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple] = []

    def request(self, *args: object) -> None:
        self.requests.append(args)


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    rec = Recorder()
    monkeypatch.setattr(hook, "ENABLED", True)
    monkeypatch.setattr(hook, "_recorder", rec)
    return rec


def test_reads_and_writes_are_recorded(s3_env: str, s3_bucket: str, recorder: Recorder) -> None:
    fs = S3(s3_bucket)
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    with fs.open("k", "wb") as f:
        f.write(b"12345")
    with fs.open("k") as f:
        f.read()
    methods = [(r[0], r[1], r[2], r[3]) for r in recorder.requests]
    opening = 200 if fs.connection.engine().plain_gets else 206  # plain GET, or ranged
    assert methods == [("s3", "PUT", 200, 5), ("s3", "GET", opening, 5)]
    assert all(r[7] == f"s3://{s3_bucket}/k" for r in recorder.requests)
    assert not any(secret in str(r) for r in recorder.requests)


def test_failed_request_is_recorded_as_error(s3_env: str, s3_bucket: str,
                                             recorder: Recorder) -> None:
    with pytest.raises(FileNotFoundError):
        S3(s3_bucket).open("missing")
    scheme, method, status, _, _, attempts, error, _ = recorder.requests[0]
    assert (scheme, method, status, attempts, error) == ("s3", "GET", 404, 1, True)


def test_retries_are_recorded_as_attempts(s3_env: str, s3_bucket: str, fault_proxy,
                                          recorder: Recorder) -> None:
    fs = S3(s3_bucket, endpoint=fault_proxy.endpoint)
    fs._retry.base = 0.001
    fault_proxy.fail_next(2)
    fs.exists("")
    assert recorder.requests[-1][5] == 3


def test_listings_and_heads_are_recorded_with_their_status(s3_env: str, s3_bucket: str,
                                                           recorder: Recorder) -> None:
    fs = S3(s3_bucket)
    with fs.open("d/k", "wb") as f:
        f.write(b"12345")
    assert list(fs.list("d")) == ["k"]
    assert fs.exists("d/k")
    methods = [(r[0], r[1], r[2]) for r in recorder.requests]
    assert methods == [("s3", "PUT", 200), ("s3", "LIST", 200), ("s3", "HEAD", 200)]
