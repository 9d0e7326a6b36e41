"""A reader open in a process that forks: the child reads on with requests of its own, never
waiting on the parent's read-ahead (whose threads are not in the child) nor on a lock a
parent's thread held, and the parent reads on as before. A reader pickled to a spawned
process reopens there at its position."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from pfio.fs.s3 import S3

BLOCK = 256 << 10
SIZE = 3 << 20
#: seconds a child may take (a hung one is killed, and the test fails)
CHILD_TIMEOUT = 60


@pytest.fixture
def direct(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket)


@pytest.fixture
def blob(direct: S3) -> bytes:
    data = os.urandom(SIZE)  # 12 blocks
    with direct.open("blob", "wb") as f:
        f.write(data)
    return data


@pytest.fixture
def fs(direct: S3, fault_proxy) -> S3:
    """Reads through the fault proxy, whose latency keeps read-ahead in flight."""
    fs = S3(direct.bucket, endpoint=fault_proxy.endpoint, buffering=BLOCK, readahead=3)
    fs._retry.base = 0.001
    return fs


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def in_forked_child(work: Callable[[], bytes]) -> str:
    """The digest of what ``work()`` returns in a forked child, or ``"error: ..."``.

    Fails the test when the child takes more than :data:`CHILD_TIMEOUT` seconds (it is
    killed)."""
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(readable)
            try:
                answer = digest(work())
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                answer = f"error: {exc!r}"
            os.write(writable, answer.encode())
        finally:
            os._exit(0)
    os.close(writable)
    try:
        ready, _, _ = select.select([readable], [], [], CHILD_TIMEOUT)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"the forked child did not finish within {CHILD_TIMEOUT} s")
        answer = b""
        while chunk := os.read(readable, 4096):
            answer += chunk
        return answer.decode()
    finally:
        os.close(readable)
        os.waitpid(pid, 0)


def start_read_ahead(f) -> None:
    """Read on in blocks until read-ahead is in flight (a slow proxy keeps it so)."""
    for _ in range(4):
        f.read(BLOCK)
        if any(not future.done() for future in f.reader._ahead.in_flight()):
            return
    pytest.fail("no read-ahead in flight")


def test_a_forked_child_reads_on_while_read_ahead_is_in_flight(fs: S3, blob: bytes,
                                                               fault_proxy) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb") as f:
        assert f.read((1 << 20) + 10) == blob[:(1 << 20) + 10]
        fault_proxy.latency = 0.5
        start_read_ahead(f)
        position = f.tell()

        def read_on() -> bytes:
            return f.read()  # the parent's read-ahead is of no use here

        assert in_forked_child(read_on) == digest(blob[position:])
        assert in_forked_child(lambda: f.read_at(1000, 100_000)) == \
            digest(blob[1000:101_000])
        fault_proxy.latency = 0
        assert f.read() == blob[position:]  # the parent's own read-ahead serves it
        f.seek(0)
        assert f.read() == blob


def test_a_forked_child_reads_on_from_where_the_parent_s_stream_is(
        fs: S3, blob: bytes, s3_requests) -> None:
    fs.read_options = replace(fs.read_options, stream_min_rate=0)  # never too slow
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        assert f.read((1 << 20) + 10) == blob[:(1 << 20) + 10]
        assert (f.reader._stream is not None) == (fs.engine == "http")

        def read_on() -> bytes:
            return b"".join(iter(lambda: f.read(100_000), b""))

        assert in_forked_child(read_on) == digest(blob[(1 << 20) + 10:])
        assert f.read() == blob[(1 << 20) + 10:]
    if fs.engine == "http":
        assert log == []  # the parent read on from its stream, whole


def test_a_forked_child_reads_a_reader_another_thread_was_reading(
        fs: S3, blob: bytes, fault_proxy) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb", first_fetch=1000) as f:
        fault_proxy.latency = 1.0
        reading = threading.Thread(target=f.read, args=(SIZE,))
        reading.start()
        deadline = time.monotonic() + 30
        while f.reader._lock.acquire(blocking=False):  # until the thread holds the reader's lock
            f.reader._lock.release()
            assert time.monotonic() < deadline
            time.sleep(0.001)

        def read_whole() -> bytes:
            f.seek(0)
            return f.read()

        assert in_forked_child(read_whole) == digest(blob)  # no wait on the lock
        reading.join()
        fault_proxy.latency = 0
        f.seek(0)
        assert f.read() == blob


def test_a_forked_child_closes_an_inherited_reader(fs: S3, blob: bytes,
                                                   fault_proxy) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb") as f:
        f.seek((1 << 20) + 10)
        fault_proxy.latency = 0.5
        start_read_ahead(f)
        position = f.tell()

        def close() -> bytes:
            f.close()
            return b"closed"

        assert in_forked_child(close) == digest(b"closed")
        fault_proxy.latency = 0
        assert f.read(100) == blob[position:position + 100]


def _read_from(reader, queue) -> None:
    queue.put(reader.read())


def test_a_reader_pickled_to_a_spawned_process_reads_on(fs: S3, blob: bytes,
                                                        fault_proxy) -> None:
    fs.read_options = replace(fs.read_options, stream=False)
    with fs.open("blob", "rb") as f:
        f.seek(1 << 20)
        fault_proxy.latency = 0.3
        start_read_ahead(f)
        position = f.tell()
        context = multiprocessing.get_context("spawn")
        queue = context.Queue()
        child = context.Process(target=_read_from, args=(f, queue))
        child.start()
        try:
            assert queue.get(timeout=CHILD_TIMEOUT) == blob[position:]
        finally:
            child.join(timeout=CHILD_TIMEOUT)
        assert child.exitcode == 0
        assert f.read() == blob[position:]
        with pickle.loads(pickle.dumps(f)) as clone:
            assert clone.tell() == SIZE and clone.read(10) == b""
