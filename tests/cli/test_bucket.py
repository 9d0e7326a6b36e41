"""pfio mb: making S3 buckets on a moto server."""

import secrets

import pytest

import pfio
from pfio.cli import main


@pytest.fixture
def new_bucket():
    """A bucket name that no bucket has yet."""
    return f"pfio-test-mb-{secrets.token_hex(6)}"


def test_mb_makes_a_bucket_that_cp_can_then_write_to(s3_env, new_bucket, tmp_path, capsys):
    (tmp_path / "f").write_bytes(b"data")
    assert main(["cp", str(tmp_path / "f"), f"s3://{new_bucket}/f"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio cp: ") and new_bucket in err and err.count("\n") == 1
    assert main(["mb", f"s3://{new_bucket}"]) == 0
    assert main(["cp", str(tmp_path / "f"), f"s3://{new_bucket}/f"]) == 0
    with pfio.open_url(f"s3://{new_bucket}/f", "rb") as f:
        assert f.read() == b"data"


def test_mb_of_an_existing_bucket_fails(s3_env, s3_bucket, capsys):
    assert main(["mb", f"s3://{s3_bucket}/"]) == 1
    err = capsys.readouterr().err
    assert err == f"pfio mb: bucket already exists: s3://{s3_bucket}\n"


def test_mb_exist_ok(s3_env, s3_bucket, new_bucket):
    assert main(["mb", "--exist-ok", f"s3://{s3_bucket}"]) == 0
    assert main(["mb", "--exist-ok", f"s3://{new_bucket}"]) == 0
    with pfio.from_url(f"s3://{new_bucket}") as fs:
        assert list(fs.list("")) == []


@pytest.mark.parametrize("url", ["s3://bucket/key", "mem://store", "/tmp/x", "s3://"])
def test_mb_needs_an_s3_bucket_url(url, capsys):
    assert main(["mb", url]) == 2
    assert "give s3://BUCKET" in capsys.readouterr().err
