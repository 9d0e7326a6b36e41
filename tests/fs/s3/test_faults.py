"""Faults injected by a TCP proxy between the client and the moto server: throttling, cut
connections and latency, on reads, listings and uploads; data compared byte for byte."""

from __future__ import annotations

import os
import socket

import pytest

from pfio.fs.s3 import S3

MIB = 1 << 20


@pytest.fixture
def direct(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket)


@pytest.fixture
def fs(direct: S3, fault_proxy) -> S3:
    fs = S3(direct.bucket, endpoint=fault_proxy.endpoint, buffering=256 << 10, readahead=2,
            max_attempts=4, mpu_chunksize=5 * MIB)
    fs._retry.base = 0.001
    return fs


@pytest.fixture
def blob(direct: S3) -> bytes:
    data = os.urandom(1536 << 10)
    with direct.open("blob", "wb") as f:
        f.write(data)
    return data


def test_throttled_read_is_retried(fs: S3, blob: bytes, fault_proxy) -> None:
    fault_proxy.fail_next(2)
    with fs.open("blob", "rb") as f:
        assert f.read() == blob
    assert fault_proxy.failed == 2


def test_cut_body_resumes_from_last_byte(fs: S3, blob: bytes, fault_proxy,
                                         s3_requests) -> None:
    log = s3_requests(fs)
    fault_proxy.cut_next(1, after_bytes=100_000)
    with fs.open("blob", "rb") as f:
        head = f.read(200_000)
    assert head == blob[:200_000]
    assert fault_proxy.cut == 1
    opening = None if fs.connection.engine().plain_gets else "bytes=0-1048575"
    assert [r[2] for r in log] == [opening, "bytes=100000-1048575"]


def test_cuts_during_read_ahead_lose_nothing(fs: S3, blob: bytes, fault_proxy) -> None:
    fault_proxy.cut_next(4, after_bytes=45_678)  # (each try brings progress that matters)
    with fs.open("blob", "rb") as f:
        data = b"".join(iter(lambda: f.read(50_000), b""))
    assert data == blob and fault_proxy.cut == 4


def test_cut_during_read_at_resumes(fs: S3, blob: bytes, fault_proxy) -> None:
    with fs.open("blob", "rb") as f:
        fault_proxy.cut_next(1, after_bytes=10)
        assert f.read_at(1_100_000, 300_000) == blob[1_100_000:1_400_000]


def test_latency_does_not_change_data(fs: S3, blob: bytes, fault_proxy) -> None:
    fault_proxy.latency = 0.02
    with fs.open("blob", "rb") as f:
        assert f.read() == blob


def test_throttled_listing_is_retried(fs: S3, direct: S3, fault_proxy) -> None:
    for name in ["d/a", "d/b", "d/c/e"]:
        with direct.open(name, "wb") as f:
            f.write(b"x")
    fault_proxy.fail_next(3)
    assert sorted(fs.list("d", recursive=True)) == ["a", "b", "c/e"]
    assert fault_proxy.failed == 3


def test_cut_listing_is_retried(fs: S3, direct: S3, fault_proxy) -> None:
    for i in range(30):
        with direct.open(f"d/{i:02d}", "wb") as f:
            f.write(b"x")
    fault_proxy.cut_next(1, after_bytes=200)
    assert list(fs.list("d")) == [f"{i:02d}" for i in range(30)]


def test_throttled_multipart_upload_is_retried(fs: S3, direct: S3, fault_proxy) -> None:
    data = os.urandom(11 * MIB)
    fault_proxy.fail_next(3)
    with fs.open("big", "wb") as f:
        f.write(data)
    with direct.open("big", "rb") as f:
        assert f.read() == data
    assert fault_proxy.failed == 3


def test_throttling_beyond_attempts_raises_oserror(fs: S3, blob: bytes, fault_proxy) -> None:
    fault_proxy.fail_next(100)
    with pytest.raises(OSError, match=r"SlowDown.*after 4 attempts") as info:
        fs.open("blob", "rb")
    assert type(info.value) is OSError and "blob" in str(info.value)


def test_forbidden_is_permission_error(fs: S3, blob: bytes, fault_proxy) -> None:
    fault_proxy.fail_next(1, status=403, code="AccessDenied")
    with pytest.raises(PermissionError, match="AccessDenied"):
        fs.open("blob", "rb")
    assert fault_proxy.requests == 1  # not retried


def test_server_error_is_retried(fs: S3, blob: bytes, fault_proxy) -> None:
    fault_proxy.fail_next(2, status=500, code="InternalError")
    assert fs.stat("blob").size == len(blob)


def test_unreachable_endpoint_raises_oserror(s3_env: str, s3_bucket: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here
    fs = S3(s3_bucket, endpoint=f"http://127.0.0.1:{port}", max_attempts=2)
    fs._retry.base = 0.001
    with pytest.raises(OSError, match="after 2 attempts"):
        fs.stat("x")
