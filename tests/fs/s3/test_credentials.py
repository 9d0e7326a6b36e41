"""Credentials reach every engine through boto3's chain: options, profiles of the shared
files, session tokens, and credentials that expire and are refreshed (``credential_process``
stands for assume-role, web identity and instance metadata: botocore refreshes all of them
the same way). Checked in the signatures the requests carry."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from pfio.fs.s3 import S3


def _access_keys(fs: S3) -> list[tuple[str, str | None]]:
    """(access key, session token) of each request ``fs`` sends from now on."""
    seen: list[tuple[str, str | None]] = []

    def hook(method: str, path: str, headers: dict[str, str]) -> None:
        match = re.search(r"Credential=([^/]+)/", headers.get("authorization", ""))
        seen.append((match.group(1) if match else "", headers.get("x-amz-security-token")))

    fs.connection.add_request_hook(hook)
    return seen


def _read_write(fs: S3) -> None:
    with fs.open("k", "wb") as f:
        f.write(b"x")
    with fs.open("k", "rb") as f:
        assert f.read() == b"x"


@pytest.fixture(autouse=True)
def _moto_only(s3_server) -> None:
    if s3_server.name != "moto":
        pytest.skip("made-up credentials: only moto does not check signatures")


@pytest.fixture
def isolated(s3_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No credentials in the environment; empty shared files under ``tmp_path``."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path


def test_explicit_options_with_a_session_token(s3_env: str, s3_bucket: str) -> None:
    fs = S3(s3_bucket, aws_access_key_id="explicit-key", aws_secret_access_key="s",
            session_token="the-token")
    seen = _access_keys(fs)
    _read_write(fs)
    assert set(seen) == {("explicit-key", "the-token")}


def test_a_profile_of_the_shared_credentials_file(isolated: Path, s3_bucket: str) -> None:
    (isolated / "credentials").write_text(
        "[default]\naws_access_key_id = default-key\naws_secret_access_key = s\n"
        "[training]\naws_access_key_id = profile-key\naws_secret_access_key = s\n")
    fs = S3(s3_bucket, profile="training")
    seen = _access_keys(fs)
    _read_write(fs)
    assert {key for key, _ in seen} == {"profile-key"}


def test_expiring_credentials_are_refreshed(isolated: Path, s3_bucket: str) -> None:
    counter = isolated / "calls"
    script = isolated / "credentials.py"
    script.write_text(
        "import datetime, json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = int(p.read_text()) + 1 if p.exists() else 1\n"
        "p.write_text(str(n))\n"
        "expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)\n"
        "print(json.dumps({'Version': 1, 'AccessKeyId': f'rotating-{n}',\n"
        "                  'SecretAccessKey': 's', 'SessionToken': f'token-{n}',\n"
        "                  'Expiration': expires.isoformat()}))\n")
    (isolated / "config").write_text(
        f"[profile rotating]\ncredential_process = {sys.executable} {script}\n")
    fs = S3(s3_bucket, profile="rotating")
    seen = _access_keys(fs)
    _read_write(fs)
    # 5 minutes left is inside botocore's refresh window: every request gets new ones
    keys = [key for key, _ in seen]
    assert len(set(keys)) == len(keys) >= 2
    assert all(key.startswith("rotating-") for key in keys)


def test_keys_given_empty_sign_the_requests(isolated: Path, s3_bucket: str,
                                            s3_engine: str) -> None:
    if s3_engine == "boto3" and importlib.util.find_spec("awscrt") is not None:
        pytest.skip("botocore signing through awscrt refuses an empty key")
    fs = S3(s3_bucket, aws_access_key_id="", aws_secret_access_key="")
    authorizations: list[str] = []
    fs.connection.add_request_hook(
        lambda method, path, headers: authorizations.append(headers.get("authorization", "")))
    _read_write(fs)  # a moto server takes them (PFIO 2.x's tests rely on it)
    assert authorizations and all("Credential=/" in a for a in authorizations)
