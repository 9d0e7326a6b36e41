"""Credentials and region read without botocore where its chain's answer is known
(pfio.fs.s3.credentials): what each setting and variable gives, and that a process reading
S3 with keys in its environment never imports botocore."""

import subprocess
import sys

import pytest

from pfio.fs.s3.connection import S3Settings
from pfio.fs.s3.credentials import FixedCredentials, known_session

KEYS = {"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "secretenv"}


@pytest.fixture
def no_config(tmp_path):
    """An environment whose AWS config file does not exist."""
    return {"AWS_CONFIG_FILE": str(tmp_path / "missing")}


def test_keys_given_to_s3_come_first(no_config):
    settings = S3Settings(aws_access_key_id="AKIDARG", aws_secret_access_key="secretarg",
                          aws_session_token="tok")
    session = known_session(settings, {**no_config, **KEYS})
    assert session.get_credentials() == FixedCredentials("AKIDARG", "secretarg", "tok")


def test_environment_keys(no_config):
    session = known_session(S3Settings(), {**no_config, **KEYS})
    assert session.get_credentials() == FixedCredentials("AKIDENV", "secretenv", None)
    assert session.region_name is None


def test_the_security_token_variable_comes_before_the_session_token(no_config):
    environ = {**no_config, **KEYS, "AWS_SESSION_TOKEN": "b", "AWS_SECURITY_TOKEN": "a"}
    assert known_session(S3Settings(), environ).get_credentials().token == "a"


def test_environment_keys_win_over_aws_profile(no_config):
    environ = {**no_config, **KEYS, "AWS_PROFILE": "other"}
    assert known_session(S3Settings(), environ).get_credentials().access_key == "AKIDENV"


@pytest.mark.parametrize("change", [
    {"AWS_SECRET_ACCESS_KEY": ""},                        # half set: botocore says what
    {"AWS_CREDENTIAL_EXPIRATION": "2030-01-01T00:00:00Z"},  # refreshable
])
def test_botocore_answers_for_unusual_environments(no_config, change):
    assert known_session(S3Settings(), {**no_config, **KEYS, **change}) is None


def test_a_named_profile_goes_to_botocore(no_config):
    assert known_session(S3Settings(profile="p"), {**no_config, **KEYS}) is None


def test_no_keys_anywhere_goes_to_botocore(no_config):
    assert known_session(S3Settings(), no_config) is None


def test_the_region_from_settings_then_aws_default_region(no_config):
    environ = {**no_config, **KEYS, "AWS_DEFAULT_REGION": "eu-west-1"}
    assert known_session(S3Settings(), environ).region_name == "eu-west-1"
    assert known_session(S3Settings(region="ap-1"), environ).region_name == "ap-1"


def test_a_config_file_without_a_region_in_the_environment_goes_to_botocore(tmp_path):
    config = tmp_path / "config"
    config.write_text("[default]\nregion = eu-north-1\n")
    environ = {**KEYS, "AWS_CONFIG_FILE": str(config)}
    assert known_session(S3Settings(), environ) is None
    assert known_session(S3Settings(), {**environ, "AWS_DEFAULT_REGION": "x"}) is not None


def test_reading_s3_with_environment_keys_never_imports_botocore(s3_env, s3_engine, s3_bucket,
                                                                tmp_path):
    code = (
        "import sys, pfio\n"
        f"with pfio.open_url('s3://{s3_bucket}/k', 'wb') as f:\n"
        "    f.write(b'data')\n"
        f"assert pfio.open_url('s3://{s3_bucket}/k', 'rb').read() == b'data'\n"
        "print('botocore' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=_environment(tmp_path))
    assert out.stdout.strip() == str(s3_engine == "boto3")  # that engine is botocore


def _environment(tmp_path):
    import os

    return {**os.environ, "AWS_CONFIG_FILE": str(tmp_path / "none")}
