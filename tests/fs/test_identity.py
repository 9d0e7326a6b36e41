"""``FS.identity(path)``: what makes a file's data distinct, as each backend says it; the
object cache keys its entries by it. S3 adds the endpoint and who reads (never a secret)."""

from __future__ import annotations

import io
import os
import zipfile

import pytest

from pfio.cache import CachedFS, ObjectCache
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.fs.s3 import S3


def test_a_local_file_is_its_absolute_url(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert Local("").identity("a/b.txt") == f"file://{tmp_path}/a/b.txt"


def test_an_archive_member_adds_the_member_to_the_archive_file(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("d/x", b"x")
    (tmp_path / "a.zip").write_bytes(buf.getvalue())
    with Local(str(tmp_path)).open_zip("a.zip") as archive:
        assert archive.identity("d/x") == f"file://{tmp_path}/a.zip!/d/x"
        assert archive.subfs("d").identity("x") == f"file://{tmp_path}/a.zip!/d/x"


def test_a_cache_does_not_change_the_identity(tmp_path):
    fs = MemoryFS("identity-cached")
    assert CachedFS(fs, str(tmp_path)).identity("k") == fs.identity("k") == \
        "mem://identity-cached/k"


def test_s3_names_endpoint_bucket_key_and_reader_without_secrets():
    fs = S3("bkt", endpoint="http://127.0.0.1:1", aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key="s3cr3t-value", session_token="t0ken-value")
    identity = fs.identity("d/k")
    assert identity.startswith("s3://bkt/d/k|endpoint=http://127.0.0.1:1|reader=")
    for secret in ("AKIDEXAMPLE", "s3cr3t-value", "t0ken-value"):
        assert secret not in identity


@pytest.mark.parametrize("other", [{"aws_access_key_id": "B"}, {"profile": "other"},
                                   {"region": "eu-west-3"}])
def test_s3_readers_with_other_credentials_have_other_identities(monkeypatch, other):
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    base = {"aws_access_key_id": "A", "region": "us-east-1"}
    one = S3("bkt", endpoint="http://e", **base)
    two = S3("bkt", endpoint="http://e", **{**base, **other})
    assert one.identity("k") != two.identity("k")


def test_s3_reader_from_the_environment(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "A")
    first = S3("bkt", endpoint="http://e").identity("k")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "B")
    assert S3("bkt", endpoint="http://e").identity("k") != first


@pytest.mark.parametrize("validate", ["ttl", "never"])
def test_two_s3_readers_with_other_credentials_share_no_cache_entry(
        s3_env, s3_bucket, s3_requests, tmp_path, validate):
    key_id, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
    with S3(s3_bucket).open("k", "wb") as f:
        f.write(b"private")
    cache = ObjectCache(str(tmp_path), validate=validate)
    alice = CachedFS(S3(s3_bucket, aws_access_key_id=key_id, aws_secret_access_key=secret),
                     cache)
    with alice.open("k", "rb") as f:
        assert f.read() == b"private"
    bob_s3 = S3(s3_bucket, aws_access_key_id="bob" + key_id, aws_secret_access_key=secret)
    log = s3_requests(bob_s3)
    try:
        with CachedFS(bob_s3, cache).open("k", "rb") as f:
            assert f.read() == b"private"  # moto takes any key
    except PermissionError:
        pass  # a server that checks signatures (Ceph) refuses bob's key, as it should
    assert log, "bob was served alice's cached copy without asking S3"
