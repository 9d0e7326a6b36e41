"""Every S3 read returns exactly the bytes asked for, or raises: answers that lie about their
bytes (a body shorter or longer than its ``Content-Range``, contradictory or duplicate
framing, a missing ETag, another size), a part of a concurrent read that fails, a read-ahead
block that fails, a stream that breaks and a reader closed while fetches are in flight.

The lies are told by the fault proxy (``rewrite_next``), which changes answers, not
requests: signatures stay valid, so these tests run on Ceph as on moto, on each engine."""

from __future__ import annotations

import io
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from pfio.fs.s3 import S3
from pfio.testing.faultproxy import Answer, Request

MIB = 1 << 20
BLOCK = 256 << 10


@pytest.fixture
def direct(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket)


@pytest.fixture
def fs(direct: S3, fault_proxy) -> S3:
    fs = S3(direct.bucket, endpoint=fault_proxy.endpoint, buffering=BLOCK, readahead=2,
            max_attempts=3)
    fs._retry.base = 0.001
    return fs


def put(fs: S3, key: str, data: bytes) -> None:
    with fs.open(key, "wb") as f:
        f.write(data)


@pytest.fixture
def blob(direct: S3) -> bytes:
    data = os.urandom(1536 << 10)  # 6 blocks
    put(direct, "blob", data)
    return data


def gets(log: list) -> list:
    return [r for r in log if r[0] == "GET"]


def ranged_from(start: int) -> Callable[[Request], bool]:
    """Selects the GETs of a range that starts at ``start``."""
    return lambda request: (request.headers.get("range") or "").startswith(f"bytes={start}-")


def ranged_past(offset: int) -> Callable[[Request], bool]:
    """Selects the GETs of a range that starts past ``offset``."""
    def match(request: Request) -> bool:
        found = re.match(r"bytes=(\d+)-", request.headers.get("range") or "")
        return found is not None and int(found[1]) > offset
    return match


# -- a body shorter than its Content-Range ------------------------------------------------

FRAMINGS = ["length", "chunked", "close"]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_short_body_is_resumed_from_its_last_byte(fs: S3, blob: bytes, fault_proxy,
                                                    s3_requests, framing: str) -> None:
    with fs.open("blob", "rb", first_fetch=1000) as f:
        log = s3_requests(fs)
        fault_proxy.short_body_next(1, missing=1000, framing=framing)
        assert f.read_at(1_100_000, 300_000) == blob[1_100_000:1_400_000]  # no zeros
    assert fault_proxy.rewritten == 1
    assert [r[2] for r in gets(log)] == ["bytes=1100000-1399999", "bytes=1399000-1399999"]


def halved(framing: str) -> Callable[[Answer], None]:
    """A rewrite that sends the first half of a body (its resumption, half of the rest)."""
    def rewrite(answer: Answer) -> None:
        answer.body = answer.body[:len(answer.body) // 2]
        answer.framing = framing
        if framing == "length":
            answer.set("Content-Length", str(len(answer.body)))
    return rewrite


@pytest.mark.parametrize("framing", FRAMINGS)
def test_short_bodies_during_read_ahead_lose_nothing(fs: S3, blob: bytes, fault_proxy,
                                                     framing: str) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb", first_fetch=1000) as f:
        fault_proxy.rewrite_next(4, halved(framing), statuses=(206,))
        assert b"".join(iter(lambda: f.read(70_001), b"")) == blob
        buf = bytearray(len(blob))
        f.seek(0)
        assert f.readinto(buf) == len(blob) and buf == blob  # the concurrent parts too
    assert fault_proxy.rewritten == 4


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_body_that_stays_short_raises_naming_the_url(fs: S3, blob: bytes, fault_proxy,
                                                       framing: str) -> None:
    with fs.open("blob", "rb", first_fetch=1000) as f:
        fault_proxy.short_body_next(10, missing=1000, framing=framing)
        with pytest.raises(OSError, match="after 3 attempts") as info:
            f.read_at(1_100_000, 300_000)  # the retries bring nothing: no progress
        assert info.value.filename == f"s3://{fs.bucket}/blob"
        assert f.read_at(0, 10) == blob[:10]  # the buffer of the opening GET


def test_a_206_of_part_of_the_range_is_resumed(fs: S3, blob: bytes, fault_proxy,
                                               s3_requests) -> None:
    def fewer(answer: Answer) -> None:  # a consistent answer of the range's first bytes
        first, last, total = map(int, re.findall(r"\d+", answer.get("content-range") or ""))
        answer.body = answer.body[:1000]
        answer.set("Content-Range", f"bytes {first}-{first + 999}/{total}")
        answer.set("Content-Length", "1000")

    with fs.open("blob", "rb", first_fetch=1000) as f:
        log = s3_requests(fs)
        fault_proxy.rewrite_next(1, fewer, statuses=(206,))
        assert f.read_at(500_000, 5000) == blob[500_000:505_000]
    assert [r[2] for r in gets(log)] == ["bytes=500000-504999", "bytes=501000-504999"]


# -- a body longer than its Content-Range --------------------------------------------------

@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_206_with_more_bytes_than_its_range_raises(fs: S3, blob: bytes, fault_proxy,
                                                     s3_requests, framing: str) -> None:
    if framing != "length" and fs.engine == "boto3":
        pytest.skip("botocore tells no length of a chunked or close-delimited body, and the "
                    "boto3 engine drops what comes after the bytes asked for")
    with fs.open("blob", "rb", first_fetch=1000) as f:
        log = s3_requests(fs)
        fault_proxy.long_body_next(1, extra=b"!" * 10, framing=framing)
        with pytest.raises(OSError, match="not the bytes asked for") as info:
            f.read_at(1_100_000, 300_000)
        assert info.value.filename == f"s3://{fs.bucket}/blob"
        assert len(gets(log)) == 1  # not retried
        assert f.read_at(1_100_000, 300_000) == blob[1_100_000:1_400_000]


# -- answers that contradict what was asked -------------------------------------------------

def _content_range(answer: Answer) -> tuple[int, int, int]:
    first, last, total = map(int, re.findall(r"\d+", answer.get("content-range") or ""))
    return first, last, total


def _range_as(make: Callable[[int, int, int], str]) -> Callable[[Answer], None]:
    def rewrite(answer: Answer) -> None:
        answer.set("Content-Range", make(*_content_range(answer)))
    return rewrite


def _duplicate(name: str) -> Callable[[Answer], None]:
    def rewrite(answer: Answer) -> None:
        answer.add(name, answer.get(name) or "")
    return rewrite


def _as_200(answer: Answer) -> None:  # a 200 of the range's bytes only: another size
    answer.status, answer.reason = 200, "OK"
    answer.set("Content-Range", None)


def _set(name: str, value: str | None) -> Callable[[Answer], None]:
    def rewrite(answer: Answer) -> None:
        answer.set(name, value)
    return rewrite


def _status(status: int) -> Callable[[Answer], None]:
    def rewrite(answer: Answer) -> None:
        answer.status = status
    return rewrite


LIES = {
    "no Content-Range": _set("Content-Range", None),
    "a total of *": _range_as(lambda a, b, t: f"bytes {a}-{b}/*"),
    "no range unit": _range_as(lambda a, b, t: f"{a}-{b}/{t}"),
    "last before first": _range_as(lambda a, b, t: f"bytes {b}-{a}/{t}"),
    "last past the total": _range_as(lambda a, b, t: f"bytes {a}-{b}/{b}"),
    "bytes other than asked": _range_as(lambda a, b, t: f"bytes {a + 1}-{b + 1}/{t}"),
    "a range past the one asked": _range_as(lambda a, b, t: f"bytes {a}-{b + 10}/{t}"),
    "another size": _range_as(lambda a, b, t: f"bytes {a}-{b}/{t + 1}"),
    "two Content-Ranges": _duplicate("Content-Range"),
    "status 203": _status(203),
    "a 200 of the range": _as_200,
    "no ETag": _set("ETag", None),
    "another ETag": _set("ETag", '"0123456789abcdef0123456789abcdef"'),
}


@pytest.mark.parametrize("lie", sorted(LIES))
def test_an_answer_that_contradicts_the_request_raises(fs: S3, blob: bytes, fault_proxy,
                                                       s3_requests, lie: str) -> None:
    with fs.open("blob", "rb", first_fetch=1000) as f:
        log = s3_requests(fs)
        fault_proxy.rewrite_next(1, LIES[lie], statuses=(206,))
        with pytest.raises(OSError) as info:
            f.read_at(1_100_000, 300_000)
        assert info.value.filename == f"s3://{fs.bucket}/blob"
        assert len(gets(log)) == 1  # not retried
        assert fault_proxy.rewritten == 1
        assert f.read_at(1_100_000, 300_000) == blob[1_100_000:1_400_000]


def _conflicting_lengths(answer: Answer) -> None:
    answer.add("Content-Length", str(int(answer.get("Content-Length") or 0) - 1))


def test_conflicting_content_lengths_never_give_bytes(fs: S3, blob: bytes,
                                                      fault_proxy) -> None:
    # (the transport may refuse them as a broken connection, and retry; or get.py refuses)
    with fs.open("blob", "rb", first_fetch=1000) as f:
        fault_proxy.rewrite_next(100, _conflicting_lengths, statuses=(206,))
        with pytest.raises(OSError) as info:
            f.read_at(1_100_000, 300_000)
        assert info.value.filename == f"s3://{fs.bucket}/blob"


def test_a_later_answer_without_the_etag_of_the_first_raises(fs: S3, blob: bytes,
                                                             fault_proxy) -> None:
    fault_proxy.cut_next(1, after_bytes=100_000)  # the opening GET breaks, and is resumed
    fault_proxy.rewrite_next(1, _set("ETag", None), statuses=(206,))  # without its ETag
    with pytest.raises(OSError, match="changed while it was open"):
        fs.open("blob", "rb", first_fetch=500_000)
    assert fault_proxy.cut == 1 and fault_proxy.rewritten == 1


def test_without_etags_an_object_that_shrinks_raises(fs: S3, direct: S3, blob: bytes,
                                                     fault_proxy) -> None:
    fault_proxy.rewrite_next(1000, _set("ETag", None))  # a server that tells no ETag
    with fs.open("blob", "rb", first_fetch=1000) as f:
        put(direct, "blob", blob[:500_000])
        with pytest.raises(OSError, match="changed while it was open"):
            f.read_at(1_100_000, 1000)  # past the new end: 416
        with pytest.raises(OSError, match="changed while it was open"):
            f.read_at(100_000, 1000)  # inside it: another size
        with pytest.raises(OSError, match="changed while it was open"):
            f.read()


# -- a part of a concurrent read that fails ----------------------------------------------

def test_a_failed_part_leaves_the_caller_s_buffer_alone(fs: S3, blob: bytes,
                                                        fault_proxy) -> None:
    with fs.open("blob", "rb", first_fetch=1000) as f:
        f.seek(100_000)
        fault_proxy.latency = 0.5  # the other parts come after the first one failed
        fault_proxy.fail_next(1, status=403, code="AccessDenied",
                              match=ranged_from(100_000))
        buf = bytearray(b"\xa5" * (5 * BLOCK))  # five parts, fetched concurrently
        with pytest.raises(PermissionError):
            f.readinto(buf)
        after = bytes(buf)
        time.sleep(1.0)
        assert bytes(buf) == after  # nothing wrote into it after readinto raised
        assert fault_proxy.failed == 1
        assert f.tell() == 100_000
        fault_proxy.latency = 0
        assert f.readinto(buf) == len(buf) and buf == blob[100_000:100_000 + len(buf)]


# -- read-ahead, streams and close ---------------------------------------------------------

def test_a_read_that_raises_leaves_the_position(fs: S3, blob: bytes, fault_proxy) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb", first_fetch=64 << 10) as f:
        # the first GET past 500 000 fails (a read-ahead block): the read that needs it
        # raises, after it copied the bytes before the block
        fault_proxy.fail_next(1, status=403, code="AccessDenied", match=ranged_past(500_000))
        pieces = []
        with pytest.raises(PermissionError):
            while True:
                at = f.tell()
                pieces.append(f.read(100_000))
        assert f.tell() == at  # not moved by the read that raised
        assert b"".join(pieces) == blob[:at]
        assert f.read() == blob[at:]  # reads on from where it was
        f.seek(0)  # and back
        assert f.read() == blob


def test_a_failed_read_ahead_block_then_a_seek_back(fs: S3, blob: bytes, fault_proxy) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb", first_fetch=64 << 10) as f:
        fault_proxy.fail_next(1, status=403, code="AccessDenied", match=ranged_past(500_000))
        f.read(500_000)  # read-ahead past 500 000 is in flight, and fails
        time.sleep(0.2)
        f.seek(10)
        assert f.read(1000) == blob[10:1010]
        f.seek(0)
        assert f.read() == blob
    assert fault_proxy.failed == 1


def test_a_stream_broken_in_a_large_readinto_is_resumed(fs: S3, blob: bytes,
                                                        fault_proxy) -> None:
    fault_proxy.cut_next(1, after_bytes=(1 << 20) + 100_000)  # past the opening fetch
    with fs.open("blob", "rb") as f:
        assert f.read(MIB) == blob[:MIB]
        buf = bytearray(len(blob))
        assert f.readinto(buf) == len(blob) - MIB
        assert buf[:len(blob) - MIB] == blob[MIB:]
    assert fault_proxy.cut == 1


def test_close_while_fetches_are_in_flight(fs: S3, blob: bytes, fault_proxy,
                                           caplog: pytest.LogCaptureFixture) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    errors: list[threading.ExceptHookArgs] = []
    hook, threading.excepthook = threading.excepthook, errors.append
    try:
        with caplog.at_level(logging.ERROR):
            f = fs.open("blob", "rb", first_fetch=64 << 10)
            f.read(500_000)
            fault_proxy.latency = 0.3
            f.read(BLOCK)  # more read-ahead, slow to come
            in_flight = list(f.reader._ahead.in_flight())
            assert in_flight and not all(future.done() for future in in_flight)
            f.close()
            for future in in_flight:
                assert future.cancelled() or future.exception(timeout=30) is None
    finally:
        threading.excepthook = hook
    assert errors == [] and caplog.records == []
    fault_proxy.latency = 0
    with fs.open("blob", "rb") as f:
        assert f.read() == blob


def test_reads_go_on_when_the_thread_pool_is_shut_down(fs: S3, blob: bytes) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb", first_fetch=64 << 10) as f:
        fs.connection.executor().shutdown()  # as at the interpreter's exit
        assert b"".join(iter(lambda: f.read(100_000), b"")) == blob
        f.seek(0)
        buf = bytearray(len(blob))
        assert f.readinto(buf) == len(blob) and buf == blob
    fs.close()


def test_read_at_and_read_tail_answer_exactly(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb", first_fetch=1000) as f:
        for offset, size in [(0, 1), (999, 2), (len(blob) - 1, 5), (len(blob), 5),
                             (123_456, 0), (1, len(blob))]:
            assert f.read_at(offset, size) == blob[offset:offset + size]
        for size in [1, 1000, len(blob), len(blob) + 10]:
            assert f.read_tail(size) == (max(0, len(blob) - size), blob[-size:])
        assert f.seek(0, io.SEEK_END) == len(blob) and f.read(10) == b""
