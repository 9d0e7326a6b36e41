"""Choosing the S3 engine: ``S3(engine=...)``, ``PFIO_S3_ENGINE``, the ``http`` default."""

from __future__ import annotations

import pytest

from pfio.fs.s3 import S3


@pytest.fixture
def no_engine_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PFIO_S3_ENGINE", raising=False)


def test_pfio_s_own_http_engine_is_the_default(no_engine_variable: None) -> None:
    assert S3("bucket", endpoint="http://127.0.0.1:9").engine == "http"


def test_the_environment_chooses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PFIO_S3_ENGINE", "boto3")
    assert S3("bucket", endpoint="http://127.0.0.1:9").engine == "boto3"


def test_the_option_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PFIO_S3_ENGINE", "http")
    assert S3("bucket", endpoint="http://127.0.0.1:9", engine="boto3").engine == "boto3"


def test_an_unknown_engine_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown S3 engine 'curl'.*boto3"):
        S3("bucket", engine="curl")


def test_an_unknown_engine_in_the_environment_is_a_value_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PFIO_S3_ENGINE", "curl")
    with pytest.raises(ValueError, match="unknown S3 engine 'curl'"):
        S3("bucket", endpoint="http://127.0.0.1:9")


def test_no_secret_in_the_reprs(s3_env: str) -> None:
    fs = S3("bucket", aws_access_key_id="AKIDVISIBLE", aws_secret_access_key="hidden-secret",
            session_token="hidden-token")
    for text in (repr(fs), repr(fs.connection), repr(fs.connection.settings)):
        assert "hidden" not in text


def test_virtual_host_addressing_puts_the_bucket_in_the_host(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    fs = S3("bucket", endpoint="http://s3.invalid:9000", addressing_style="virtual",
            engine="http", max_attempts=1)
    seen: list[tuple[str, str]] = []
    fs.connection.add_request_hook(lambda method, path, headers: seen.append(
        (path, headers["host"])))
    with pytest.raises(OSError, match="s3://bucket/k"):  # .invalid names never resolve
        fs.open("k", "rb")
    assert seen == [("/bucket/k", "bucket.s3.invalid:9000")]


def test_unset_timeouts_are_pfio_s_defaults() -> None:
    fs = S3("bucket", endpoint="http://127.0.0.1:9", connect_timeout=None, read_timeout=None)
    settings = fs.connection.settings
    assert (settings.connect_timeout, settings.read_timeout) == (5.0, 10.0)
    assert (fs.connect_timeout, fs.read_timeout) == (5.0, 10.0)
