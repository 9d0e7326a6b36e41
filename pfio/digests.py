"""SHA-256, MD5 and HMAC-SHA256 that a ``fork()`` never catches half done.

OpenSSL 3 guards some of its state with process-wide locks: the first call a thread makes
registers the thread under one, the thread's exit unregisters it under the same lock, and
some calls take others inside. CPython releases the GIL around OpenSSL's work (an HMAC
always, a hash of 2 KiB or more), so another thread can ``fork()`` while a lock is held;
the child inherits the lock held by a thread it does not have, and its first OpenSSL call
from a new thread waits forever (seen: a DataLoader-style child's S3 signing thread, in
``HMAC`` -> ``ERR_set_mark`` -> ``CRYPTO_THREAD_write_lock``). pfio hashes in background
threads (part uploads, read-ahead signing) while users fork, so it keeps OpenSSL out of
every thread it does not own:

- Small inputs (under :data:`SMALL` bytes: request signatures, names, delete lists) are
  hashed in the calling thread with CPython's own SHA-256 and MD5, which take no lock
  and leave no per-thread state; HMAC is built on them (faster than OpenSSL's for a
  signature: no per-call key setup).
- Large inputs (upload parts, objects) are hashed by OpenSSL on a few daemon threads that
  live as long as the process, so no thread that used OpenSSL exits. A fork waits until
  the jobs in flight are done and starts no new one until it has happened (an
  ``os.register_at_fork`` hook); the child starts fresh threads.

Threads that other libraries start and that call OpenSSL themselves (botocore's signing,
``ssl`` sockets) are outside pfio's reach.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol, cast

__all__ = ["SMALL", "HmacSha256", "hmac_sha256", "md5_digest", "md5_hasher", "sha256_digest",
           "sha256_hex"]

#: inputs shorter than this are hashed in the calling thread, without OpenSSL
SMALL = 64 * 1024
_WORKERS = min(4, os.cpu_count() or 1)
_BLOCK = 64  # SHA-256's block size, which HMAC pads its key to

Data = bytes | bytearray | memoryview


class _Hash(Protocol):
    def update(self, data: Data, /) -> None: ...
    def digest(self) -> bytes: ...
    def copy(self) -> _Hash: ...


def _builtin(modules: tuple[str, ...], name: str) -> Callable[[Data], _Hash] | None:
    """CPython's own implementation of ``name`` (module ``_sha256`` before 3.12,
    ``_sha2`` after; ``_md5``), None on builds without them."""
    for module in modules:
        try:
            return cast("Callable[[Data], _Hash]",
                        getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return None


def _openssl_md5_object(data: Data) -> hashlib._Hash:
    return hashlib.md5(data, usedforsecurity=False)


#: CPython's own SHA-256 and MD5, for small inputs (builds without them fall back to
#: OpenSSL's, in the calling thread)
_own_sha256 = _builtin(("_sha2", "_sha256"), "sha256") or cast(
    "Callable[[Data], _Hash]", hashlib.sha256)
_own_md5 = _builtin(("_md5",), "md5") or cast("Callable[[Data], _Hash]", _openssl_md5_object)


def _openssl_sha256(data: Data) -> bytes:
    return hashlib.sha256(data).digest()


def _openssl_md5(data: Data) -> bytes:
    return hashlib.md5(data, usedforsecurity=False).digest()


def sha256_digest(data: Data) -> bytes:
    """The SHA-256 of ``data`` (32 bytes)."""
    if len(data) < SMALL:
        return _own_sha256(data).digest()
    return _openssl.run(_openssl_sha256, data)


def sha256_hex(data: Data) -> str:
    """The SHA-256 of ``data``, as 64 lower-case hex digits."""
    return sha256_digest(data).hex()


def md5_digest(data: Data) -> bytes:
    """The MD5 of ``data`` (16 bytes; a checksum, not for security)."""
    if len(data) < SMALL:
        return _own_md5(data).digest()
    return _openssl.run(_openssl_md5, data)


def md5_hasher() -> _Hash:
    """An MD5 to feed with ``update`` (chunks of a file), then ``digest()``: CPython's own
    (about 0.8x OpenSSL's speed), so that the thread feeding it never enters OpenSSL."""
    return _own_md5(b"")


class HmacSha256:
    """HMAC-SHA256 with one key, its padded states computed once (RFC 2104)."""

    __slots__ = ("_inner", "_outer")

    def __init__(self, key: bytes) -> None:
        if len(key) > _BLOCK:
            key = sha256_digest(key)
        key = key.ljust(_BLOCK, b"\0")
        self._inner = _own_sha256(bytes(b ^ 0x36 for b in key))
        self._outer = _own_sha256(bytes(b ^ 0x5C for b in key))

    def digest(self, message: bytes) -> bytes:
        """The HMAC of ``message`` (32 bytes)."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 of ``message`` with ``key`` (32 bytes); :class:`HmacSha256` keeps the
    key's states for many messages."""
    return HmacSha256(key).digest(message)


_Job = tuple["Future[bytes]", Callable[[Data], bytes], Data]


class _OpenSSLThreads:
    """The daemon threads that run OpenSSL's hashes, and the gate a fork passes: jobs in
    flight finish first, new ones wait until the fork is done."""

    def __init__(self) -> None:
        self._gate = threading.Condition(threading.Lock())
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._in_flight = 0
        self._forking = False
        self._started = False

    def run(self, hash_of: Callable[[Data], bytes], data: Data) -> bytes:
        """``hash_of(data)`` on one of the threads; waits for it."""
        future: Future[bytes] = Future()
        with self._gate:
            while self._forking:
                self._gate.wait()
            if not self._started:
                self._start()
            self._in_flight += 1
        self._jobs.put((future, hash_of, data))
        return future.result()

    def _start(self) -> None:
        for i in range(_WORKERS):
            threading.Thread(target=self._work, name=f"pfio-digest_{i}", daemon=True).start()
        self._started = True

    def _work(self) -> None:
        while True:
            future, hash_of, data = self._jobs.get()
            try:
                future.set_result(hash_of(data))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)
            with self._gate:
                self._in_flight -= 1
                if self._forking and not self._in_flight:
                    self._gate.notify_all()

    def before_fork(self) -> None:
        """Hold the gate through the fork, once no job is in flight."""
        self._gate.acquire()
        self._forking = True
        while self._in_flight:
            self._gate.wait()

    def after_fork_in_parent(self) -> None:
        self._forking = False
        self._gate.notify_all()
        self._gate.release()

    @property
    def forking(self) -> bool:
        """Whether a fork waits at the gate (for tests)."""
        return self._forking


_openssl = _OpenSSLThreads()


def _after_fork_in_child() -> None:
    global _openssl
    _openssl = _OpenSSLThreads()  # the parent's threads are not here


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=lambda: _openssl.before_fork(),
                        after_in_parent=lambda: _openssl.after_fork_in_parent(),
                        after_in_child=_after_fork_in_child)
