"""``pfio -v``/``-vv`` never print credentials: the access key id, secret key and session
token of a run against the moto server (real HTTP) appear nowhere in its output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "AKIDPFIOTEST0000KEY1",
    "AWS_SECRET_ACCESS_KEY": "pfioSecretKeyNeverPrinted0123456789",
    "AWS_SESSION_TOKEN": "pfioSessionTokenNeverPrinted+abc/xyz=",
}


@pytest.fixture
def obj(s3_env, s3_bucket):
    import boto3

    client = boto3.client("s3", endpoint_url=s3_env)
    client.put_object(Bucket=s3_bucket, Key="dir/a.txt", Body=b"payload")
    client.close()
    return f"s3://{s3_bucket}/dir/a.txt"


def run_pfio(*args: str, engine: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **CREDENTIALS,
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    if engine:
        env["PFIO_S3_ENGINE"] = engine
    return subprocess.run([sys.executable, "-m", "pfio", *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("engine", ["http", "boto3"])
@pytest.mark.parametrize("verbosity", ["-v", "-vv"])
def test_verbose_run_prints_no_credentials(obj, verbosity, engine):
    result = run_pfio(verbosity, "cat", obj, engine=engine)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "payload"
    for secret in CREDENTIALS.values():
        assert secret not in result.stderr
    if verbosity == "-vv" and engine == "boto3":  # botocore's request log is there, redacted
        assert "X-Amz-Security-Token': b'<redacted>'" in result.stderr


def test_verbose_keeps_other_libraries_quiet(obj):
    stderr = run_pfio("-v", "cat", obj).stderr
    assert "Sending http request" not in stderr and "Event " not in stderr


def test_failing_verbose_run_prints_no_credentials(obj):
    result = run_pfio("-vv", "cat", obj.replace("a.txt", "missing.txt"))
    assert result.returncode == 1
    assert "missing.txt" in result.stderr
    for secret in CREDENTIALS.values():
        assert secret not in result.stderr
