"""One version per open file: the first response's ETag pins the object, later GETs send
``If-Match``; a server answering a range with the whole object is read correctly."""

from __future__ import annotations

import os

import pytest

from pfio.fs.s3 import S3


@pytest.fixture
def fs(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket, buffering=64 << 10, readahead=0)


@pytest.fixture
def proxied(fs: S3, fault_proxy, s3_server) -> S3:
    if s3_server.name != "moto":
        pytest.skip("the proxy removes a signed header: only moto does not check signatures")
    proxied = S3(fs.bucket, endpoint=fault_proxy.endpoint, buffering=64 << 10, readahead=0)
    proxied._retry.base = 0.001
    return proxied


def put(fs: S3, key: str, data: bytes) -> None:
    with fs.open(key, "wb") as f:
        f.write(data)


def test_an_object_replaced_while_open_raises_naming_it(fs: S3) -> None:
    put(fs, "v", os.urandom(300_000))
    with fs.open("v", "rb", first_fetch=1000) as f:
        f.read(1000)
        put(fs, "v", os.urandom(300_000))
        with pytest.raises(OSError, match="changed while it was open") as info:
            f.read()
    assert info.value.filename == f"s3://{fs.bucket}/v"


def test_later_gets_send_if_match(fs: S3, s3_requests) -> None:
    put(fs, "v", b"x" * 5000)
    etag = fs.stat("v").etag
    seen: list[str | None] = []
    fs.connection.add_request_hook(lambda method, path, headers: seen.append(
        headers.get("if-match")))
    with fs.open("v", "rb", first_fetch=100) as f:
        f.seek(4000)
        f.read(10)
    assert seen == [None, f'"{etag}"']


def test_a_resumed_range_answered_whole_is_read_from_the_right_byte(
        proxied: S3, fs: S3, fault_proxy) -> None:
    data = os.urandom(1 << 20)
    put(fs, "blob", data)
    fault_proxy.cut_next(1, after_bytes=100_000)
    fault_proxy.ignore_range_next(1, skip=1)  # the resumed request comes back whole
    with proxied.open("blob", "rb", first_fetch=500_000) as f:
        assert f.read() == data
    assert fault_proxy.cut == 1


def test_a_range_answered_whole_gives_the_range(proxied: S3, fs: S3, fault_proxy) -> None:
    data = os.urandom(200_000)
    put(fs, "blob", data)
    with proxied.open("blob", "rb", first_fetch=1000) as f:
        fault_proxy.ignore_range_next(1)
        assert f.read_at(150_000, 100) == data[150_000:150_100]


#: a range larger than a read-ahead block and than a connection's receive buffers
LARGE_GET = 8 << 20


def test_a_large_range_of_a_replaced_object_raises(fs: S3) -> None:
    size = LARGE_GET + (1 << 20)
    put(fs, "big", os.urandom(size))
    with fs.open("big", "rb", first_fetch=1000) as f:
        put(fs, "big", os.urandom(size))
        with pytest.raises(OSError, match="changed while it was open"):
            f.read_at(0, LARGE_GET)


def test_a_large_range_is_read_whole(fs: S3, s3_requests) -> None:
    data = os.urandom(2 * LARGE_GET + 12345)
    put(fs, "big", data)
    log = s3_requests(fs)
    with fs.open("big", "rb", first_fetch=1000) as f:
        assert f.read_at(5, 2 * LARGE_GET) == data[5:5 + 2 * LARGE_GET]
    assert [r[2] for r in log] == ["bytes=0-999", f"bytes=5-{2 * LARGE_GET + 4}"]
