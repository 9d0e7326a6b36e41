"""No credential reaches a repr, an error message, a traceback or a debug log line: not the
access key, the secret key, a session token or a request's signature, from the options, the
environment or an endpoint URL. With the http engine botocore only supplies credentials, so
its debug log holds no request of pfio's; the boto3 engine's requests are logged redacted."""

from __future__ import annotations

import logging
import os
import re
import socket
import traceback

import pytest

from pfio.fs.s3 import S3

MIB = 1 << 20
KEY_ID, SECRET, TOKEN = "pfio-key-id-7788", "pfio-secret-9911", "pfio-token-5566"
SIGNATURE = re.compile(r"Signature=[0-9a-f]{16}")


def _texts(exc: BaseException) -> str:
    """The messages of ``exc`` and of its causes, and its formatted traceback."""
    return "".join(traceback.format_exception(exc))


def _assert_clean(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text
    assert not SIGNATURE.search(text)


def _workout(fs: S3) -> None:
    """Every kind of request pfio sends."""
    with fs.open("d/small", "wb") as f:
        f.write(b"12345")
    with fs.open("d/big", "wb") as f:
        f.write(os.urandom(6 * MIB))
    with fs.open("d/small", "rb") as f:
        assert f.read() == b"12345"
    assert sorted(fs.list("d")) == ["big", "small"]
    assert fs.stat("d/small").size == 5 and fs.exists("d/big")
    fs.rename("d/small", "d/moved")
    fs.copy_limit = 5 * MIB
    fs.copy_part_size = 5 * MIB
    fs.rename("d/big", "d/big2")  # a multipart copy
    fs.remove("d/moved")
    fs.remove("d", recursive=True)
    assert not fs.exists("d/big2")
    with pytest.raises(FileNotFoundError) as info:
        fs.open("missing", "rb")
    _assert_clean(_texts(info.value), *_secrets(fs))


def _secrets(fs: S3) -> list[str]:
    settings = fs.connection.settings
    found = [settings.aws_access_key_id, settings.aws_secret_access_key,
             settings.aws_session_token, os.environ.get("AWS_SECRET_ACCESS_KEY"),
             os.environ.get("AWS_ACCESS_KEY_ID")]
    return [s for s in found if s]


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    for name in ("pfio", "botocore", "boto3", "urllib3"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    handler = caplog.handler
    return "\n".join(handler.format(record) for record in caplog.records)


def test_debug_logs_show_no_credential_or_token(s3_env: str, s3_server, s3_bucket: str,
                                                s3_engine: str, debug_logs) -> None:
    if s3_server.name != "moto":
        pytest.skip("made-up credentials and a session token: only moto takes them")
    fs = S3(s3_bucket, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
            session_token=TOKEN, mpu_chunksize=5 * MIB)
    _workout(fs)
    S3(f"{s3_bucket}-new", aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
       session_token=TOKEN, create_bucket=True)
    text = _logged(debug_logs)
    _assert_clean(text, KEY_ID, SECRET, TOKEN)
    senders = {record.name for record in debug_logs.records
               if "Sending http request" in record.getMessage()}
    if s3_engine == "http":
        assert senders == set()  # botocore sent nothing: it was only a credential source
    else:
        assert senders == {"botocore.endpoint"}  # (logged, redacted)
        assert "X-Amz-Security-Token" in text and "Authorization" in text


def test_debug_logs_show_no_key_of_the_environment(s3_env: str, s3_bucket: str,
                                                   debug_logs) -> None:
    fs = S3(s3_bucket, mpu_chunksize=5 * MIB)  # (Ceph checks these credentials' signatures)
    _workout(fs)
    _assert_clean(_logged(debug_logs), os.environ["AWS_ACCESS_KEY_ID"],
                  os.environ["AWS_SECRET_ACCESS_KEY"])


def test_a_bad_signature_error_shows_no_secret(s3_env: str, s3_server, s3_bucket: str,
                                               debug_logs) -> None:
    if s3_server.name != "ceph":
        pytest.skip("moto does not check signatures")
    wrong = "pfio-wrong-secret-4455"
    fs = S3(s3_bucket, aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=wrong)
    with pytest.raises(PermissionError, match="SignatureDoesNotMatch") as info:
        fs.open("k", "rb")
    _assert_clean(_texts(info.value), wrong, os.environ["AWS_ACCESS_KEY_ID"])
    with pytest.raises(PermissionError):
        with fs.open("k", "wb") as f:
            f.write(b"x")
    _assert_clean(_logged(debug_logs), wrong)


def test_connection_errors_show_no_secret(s3_env: str, debug_logs) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here
    fs = S3("bucket", endpoint=f"http://127.0.0.1:{port}", aws_access_key_id=KEY_ID,
            aws_secret_access_key=SECRET, session_token=TOKEN, max_attempts=2)
    fs._retry.base = 0.001
    with pytest.raises(OSError, match="after 2 attempts") as info:
        fs.stat("k")
    _assert_clean(_texts(info.value), KEY_ID, SECRET, TOKEN)
    _assert_clean(_logged(debug_logs), KEY_ID, SECRET, TOKEN)


def test_reprs_show_no_secret(s3_env: str) -> None:
    fs = S3("bucket", aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
            session_token=TOKEN)
    for text in (repr(fs), str(fs), repr(fs.connection), repr(fs.connection.settings),
                 repr(fs._retry)):
        _assert_clean(text, KEY_ID, SECRET, TOKEN)
    assert "bucket" in repr(fs) and "bucket" in repr(fs.connection)


@pytest.mark.parametrize("endpoint", ["http://user:pa55w0rd@127.0.0.1:9000",
                                      "https://user@s3.example.com",
                                      "http://:pa55w0rd@127.0.0.1:9000/"])
def test_an_endpoint_with_userinfo_is_refused_without_echoing_it(
        s3_env: str, endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="user name or password") as info:
        S3("bucket", endpoint=endpoint)
    assert "pa55w0rd" not in str(info.value) and "user" + ":" not in str(info.value)
    assert "<redacted>@" in str(info.value)
    monkeypatch.setenv("S3_ENDPOINT", endpoint)
    with pytest.raises(ValueError) as info:
        S3("bucket")
    assert "pa55w0rd" not in str(info.value)
