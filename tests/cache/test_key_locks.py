"""Download locks of object cache keys: one holder per key among threads and processes,
others keys not held up, and the lock gone with its holder."""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from pfio.cache import key_locks
from pfio.cache.key_locks import key_lock, lock_path

KEY_A = "ab" + "0" * 62
KEY_B = "ab" + "1" * 62


@pytest.fixture(params=["byte locks", "lock files"])
def shard(request, tmp_path, monkeypatch):
    """A shard directory, with each kind of lock: bytes of one file (Linux), or a file per
    key (elsewhere)."""
    if request.param == "lock files":
        monkeypatch.setattr(key_locks, "BYTE_LOCKS", False)
    elif not key_locks.BYTE_LOCKS:
        pytest.skip("no open file description locks on this platform")
    return str(tmp_path)


def test_a_held_key_is_refused_to_another_thread(shard):
    prefix = os.path.join(shard, KEY_A)
    seen = []
    with key_lock(prefix) as held:
        thread = threading.Thread(
            target=lambda: seen.append(key_lock(prefix, wait=False).__enter__()))
        thread.start()
        thread.join()
    assert held and seen == [False]


def test_another_key_is_not_held_up(shard):
    with key_lock(os.path.join(shard, KEY_A)):
        with key_lock(os.path.join(shard, KEY_B), wait=False) as other:
            assert other


def test_a_waiter_gets_the_key_once_it_is_released(shard):
    prefix = os.path.join(shard, KEY_A)
    order = []
    with key_lock(prefix):
        waiter = threading.Thread(target=_take_and_note, args=(prefix, order))
        waiter.start()
        waiter.join(0.2)
        order.append("released")
    waiter.join(10)
    assert order == ["released", "taken"]


def _take_and_note(prefix: str, order: list) -> None:
    with key_lock(prefix):
        order.append("taken")


def _hold_and_die(prefix: str, ready) -> None:
    with key_lock(prefix):
        ready.set()
        os._exit(0)  # killed while holding it: nothing runs the release


def test_the_lock_of_a_dead_process_is_free(shard):
    prefix = os.path.join(shard, KEY_A)
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    child = ctx.Process(target=_hold_and_die, args=(prefix, ready))
    child.start()
    assert ready.wait(30)
    child.join(30)
    with key_lock(prefix, wait=False) as held:
        assert held


def test_a_process_holding_a_key_keeps_it_from_another(shard):
    prefix = os.path.join(shard, KEY_A)
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    with key_lock(prefix):
        child = ctx.Process(target=lambda: results.put(
            key_lock(prefix, wait=False).__enter__()))
        child.start()
        outcome = results.get(timeout=30)
        child.join(30)
    assert outcome is False


def test_byte_locks_share_one_file_per_shard(tmp_path):
    if not key_locks.BYTE_LOCKS:
        pytest.skip("no open file description locks on this platform")
    assert lock_path(str(tmp_path / KEY_A)) == lock_path(str(tmp_path / KEY_B)) \
        == str(tmp_path / key_locks.SHARD_LOCKS)
