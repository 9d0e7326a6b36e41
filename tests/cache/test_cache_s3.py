"""The caches over S3 (a moto server on 127.0.0.1, real HTTP)."""

from __future__ import annotations

import io
import zipfile

import pytest

import pfio
from pfio.cache import CachedFS, ObjectCache
from pfio.cache.blocks import BlockFile
from pfio.cache.object_cache import Source

pytest.importorskip("boto3")

from pfio.fs.s3 import S3  # noqa: E402


def put(fs: S3, key: str, data: bytes) -> None:
    with fs.open(key, "wb") as f:
        f.write(data)


def make_zip(count: int) -> tuple[bytes, dict[str, bytes]]:
    contents = {f"m/{i}.bin": bytes([i % 256]) * (5000 + i) for i in range(count)}
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as z:
        for name, body in contents.items():
            z.writestr(name, body)
    return data.getvalue(), contents


def test_zip_on_s3_epoch_two_sends_no_request(s3_env, s3_bucket, s3_requests, tmp_path):
    raw, contents = make_zip(30)
    put(S3(s3_bucket), "train.zip", raw)
    cache = ObjectCache(str(tmp_path), validate="ttl", ttl=3600)
    first = CachedFS(S3(s3_bucket), cache, whole_file_limit=1000, block_size=16384)
    epoch1 = first.open_zip("train.zip")
    assert isinstance(epoch1._backing(), BlockFile)
    assert {n: epoch1.open(n, "rb").read() for n in contents} == contents
    s3 = S3(s3_bucket)
    log = s3_requests(s3)
    epoch2 = CachedFS(s3, cache, whole_file_limit=1000, block_size=16384).open_zip("train.zip")
    assert {n: epoch2.open(n, "rb").read() for n in contents} == contents
    assert log == []


def test_from_url_with_cache_reads_a_zip_on_s3(s3_env, s3_bucket, tmp_path):
    raw, contents = make_zip(3)
    put(S3(s3_bucket), "a.zip", raw)
    archive = pfio.from_url(f"s3://{s3_bucket}/a.zip", cache=str(tmp_path))
    assert isinstance(archive.backend, CachedFS)
    assert archive.open("m/2.bin", "rb").read() == contents["m/2.bin"]


def test_object_cache_path_of_an_s3_url(s3_env, s3_bucket, tmp_path):
    put(S3(s3_bucket), "dir/obj.bin", b"object bytes")
    cache = ObjectCache(str(tmp_path))
    with cache.path(f"s3://{s3_bucket}/dir/obj.bin") as local:
        assert open(local, "rb").read() == b"object bytes"


def test_changed_s3_object_is_fetched_again_under_open(s3_env, s3_bucket, tmp_path):
    fs = S3(s3_bucket)
    put(fs, "k", b"first")
    cache = ObjectCache(str(tmp_path), validate="open")
    assert cache.open_source(Source(fs, "k")).read() == b"first"
    put(fs, "k", b"other")  # same size, new ETag
    assert cache.open_source(Source(fs, "k")).read() == b"other"


def test_two_endpoints_of_one_server_never_share_an_entry(s3_env, s3_bucket):
    other = s3_env.replace("127.0.0.1", "localhost")
    one, two = S3(s3_bucket, endpoint=s3_env), S3(s3_bucket, endpoint=other)
    assert Source(one, "k").key != Source(two, "k").key


def test_zip_member_url_on_s3(s3_env, s3_bucket, tmp_path):
    raw, contents = make_zip(2)
    put(S3(s3_bucket), "z.zip", raw)
    cache = ObjectCache(str(tmp_path))
    with cache.path(f"s3://{s3_bucket}/z.zip/m/1.bin") as local:
        assert open(local, "rb").read() == contents["m/1.bin"]
