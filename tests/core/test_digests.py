"""pfio.digests: the right hashes, and a fork that never inherits OpenSSL half done."""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
import time

import pytest

from pfio import digests

SIZES = [0, 1, 63, 64, 65, digests.SMALL - 1, digests.SMALL, 3 * digests.SMALL + 7]


@pytest.mark.parametrize("size", SIZES)
def test_sha256_matches_hashlib(size):
    data = os.urandom(size)
    assert digests.sha256_hex(data) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("size", SIZES)
def test_md5_matches_hashlib(size):
    data = os.urandom(size)
    assert digests.md5_digest(data) == hashlib.md5(data).digest()


def test_memoryview_and_bytearray_hash_like_bytes():
    data = os.urandom(digests.SMALL * 2)
    expected = hashlib.sha256(data).hexdigest()
    assert digests.sha256_hex(memoryview(data)) == expected
    assert digests.sha256_hex(bytearray(data)) == expected


def test_md5_hasher_fed_in_chunks_matches_hashlib():
    data = os.urandom(200_000)
    hasher = digests.md5_hasher()
    for start in range(0, len(data), 7_000):
        hasher.update(data[start:start + 7_000])
    assert hasher.digest() == hashlib.md5(data).digest()


@pytest.mark.parametrize("key_size", [0, 1, 32, 64, 65, 200])
def test_hmac_matches_the_standard_library(key_size):
    key, message = os.urandom(key_size), os.urandom(300)
    assert digests.hmac_sha256(key, message) == hmac.digest(key, message, "sha256")


def test_one_key_signs_many_messages():
    signer = digests.HmacSha256(b"secret")
    for message in (b"", b"a", b"b" * 1000):
        assert signer.digest(message) == hmac.digest(b"secret", message, "sha256")


def test_a_large_hash_raises_what_openssl_raises():
    with pytest.raises(TypeError):
        digests.sha256_digest("text" * digests.SMALL)


def _wait_for(predicate, what):
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def _reap(pid: int) -> int:
    """The child's exit code; a child still alive after 30 s is killed and fails."""
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.005)


def _child_hashes_in_a_new_thread() -> None:
    """In a forked child: hash (large and small) and sign in a fresh thread, exit 0 if
    it finished within 10 s."""
    def work():
        digests.sha256_digest(bytes(digests.SMALL * 4))
        digests.md5_digest(bytes(digests.SMALL * 4))
        digests.hmac_sha256(b"k", b"m")
        hashlib.sha256(b"x" * 4096).digest()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(10)
    os._exit(1 if thread.is_alive() else 0)


def test_a_fork_waits_for_a_hash_in_flight():
    started, release = threading.Event(), threading.Event()

    def slow(data):
        started.set()
        release.wait(30)
        return b"done"

    hashing = threading.Thread(target=digests._openssl.run, args=(slow, b""))
    hashing.start()
    started.wait(30)
    forked = []

    def fork():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        forked.append(pid)

    forker = threading.Thread(target=fork)
    forker.start()
    _wait_for(lambda: digests._openssl.forking, "the fork to reach the gate")
    assert not forked  # the fork waits while the hash runs
    release.set()
    forker.join(30)
    hashing.join(30)
    assert len(forked) == 1
    assert _reap(forked[0]) == 0
    assert not digests._openssl.forking


def test_children_forked_while_threads_hash_and_sign_can_hash():
    stop = threading.Event()
    data = os.urandom(digests.SMALL * 8)

    def busy():
        signer = digests.HmacSha256(b"k" * 32)
        while not stop.is_set():
            digests.sha256_digest(data)
            digests.md5_digest(data)
            signer.digest(b"x" * 200)

    workers = [threading.Thread(target=busy) for _ in range(4)]
    for worker in workers:
        worker.start()
    try:
        for _ in range(20):
            pid = os.fork()
            if pid == 0:
                _child_hashes_in_a_new_thread()
            assert _reap(pid) == 0
    finally:
        stop.set()
        for worker in workers:
            worker.join()
