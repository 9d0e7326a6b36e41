"""Sequential reads from the start read on from the plain opening GET where the engine keeps
its body (``http``): one request for the whole object; a slow or broken stream, a seek
elsewhere or another process hands over to ranged GETs, losing no byte."""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import replace

import pytest

from pfio.fs.s3 import S3

SIZE = 3 << 20


@pytest.fixture
def fs(s3_env: str, s3_bucket: str) -> S3:
    """An S3 filesystem whose readers never leave a stream for being slow (a loaded machine
    can make any stream slow: the rate floor has tests of its own that set it)."""
    s3 = S3(s3_bucket, buffering=256 << 10, readahead=2)
    s3.read_options = replace(s3.read_options, stream_min_rate=0)
    return s3


@pytest.fixture
def blob(fs: S3) -> bytes:
    data = os.urandom(SIZE)
    with fs.open("blob", "wb") as f:
        f.write(data)
    return data


@pytest.fixture
def streams(fs: S3) -> bool:
    """Whether this engine keeps the opening GET's body for the reader."""
    return fs.connection.engine_name == "http"


def read_in_pieces(f, piece: int) -> bytes:
    return b"".join(iter(lambda: f.read(piece), b""))


@pytest.mark.parametrize("piece", [1000, 100_000, 1 << 20])
def test_a_sequential_read_is_one_request(fs: S3, blob: bytes, streams: bool, s3_requests,
                                          piece: int) -> None:
    log = s3_requests(fs)
    with fs.open("blob", "rb") as f:
        assert read_in_pieces(f, piece) == blob
    if streams:
        assert log == [("GET", f"/{fs.bucket}/blob", None)]
    else:
        assert len(log) > 1


def test_a_read_into_a_large_buffer_comes_straight_from_the_stream(
        fs: S3, blob: bytes, streams: bool, s3_requests) -> None:
    log = s3_requests(fs)
    target = bytearray(SIZE)
    with fs.open("blob", "rb") as f:
        assert f.readinto(target) == SIZE
    assert target == blob
    assert len(log) == 1 or not streams


def test_a_seek_elsewhere_ends_the_stream(fs: S3, blob: bytes, streams: bool,
                                          s3_requests) -> None:
    log = s3_requests(fs)
    with fs.open("blob", "rb") as f:
        f.seek(SIZE - 100)
        assert f.read() == blob[-100:]
        assert f.reader._stream is None
        f.seek(1 << 20)
        assert f.read(1000) == blob[1 << 20:(1 << 20) + 1000]
    random_fetch = fs.read_options.random_fetch
    assert [r[2] for r in log[1:]] == [f"bytes={SIZE - 100}-{SIZE - 100 + random_fetch - 1}",
                                       f"bytes={1 << 20}-{(1 << 20) + random_fetch - 1}"]


def test_a_slow_stream_gives_way_to_read_ahead(fs: S3, blob: bytes, streams: bool,
                                               s3_requests) -> None:
    fs.read_options = replace(fs.read_options, stream_min_rate=1e15)  # nothing is that fast
    log = s3_requests(fs)
    with fs.open("blob", "rb") as f:
        assert read_in_pieces(f, 100_000) == blob
    assert len(log) > 2 and all(r[2].startswith("bytes=") for r in log[1:])


def test_a_sequential_file_stays_on_its_one_get_however_slow(fs: S3, blob: bytes,
                                                             streams: bool,
                                                             s3_requests) -> None:
    if not streams:
        pytest.skip("the engine does not stream")
    fs.read_options = replace(fs.read_options, stream_min_rate=1e15)  # nothing is that fast
    log = s3_requests(fs)
    with fs.open("blob", "rb", sequential=True) as f:
        assert read_in_pieces(f, 100_000) == blob
    assert len(log) == 1 and log[0][2] is None  # one plain GET


def test_a_broken_stream_is_resumed_by_ranged_gets(s3_env: str, s3_bucket: str, streams: bool,
                                                   fault_proxy, s3_requests) -> None:
    if not streams:
        pytest.skip("the engine does not stream")
    fs = S3(s3_bucket, endpoint=fault_proxy.endpoint, buffering=256 << 10)
    data = os.urandom(SIZE)
    with fs.open("blob", "wb") as f:
        f.write(data)
    log = s3_requests(fs)
    fault_proxy.cut_next(1, after_bytes=(1 << 20) + 300_000)  # past the opening fetch
    with fs.open("blob", "rb") as f:
        assert read_in_pieces(f, 100_000) == data
    assert fault_proxy.cut == 1
    assert all(r[2].startswith("bytes=") for r in log[1:])


def _read_on(f, queue) -> None:
    queue.put(f.read())


def test_a_forked_child_does_not_read_the_parent_s_stream(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb") as f:
        assert f.read(10) == blob[:10]
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_read_on, args=(f, queue))
        child.start()
        assert queue.get(timeout=60) == blob[10:]  # through ranged GETs of its own
        child.join(timeout=60)
        assert child.exitcode == 0
        assert f.read() == blob[10:]  # the parent's stream is whole
