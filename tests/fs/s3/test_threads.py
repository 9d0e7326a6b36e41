"""The background threads of an S3 connection (pfio.fs.s3.threads.WorkerPool)."""

import threading

import pytest

from pfio.fs.s3.threads import WorkerPool


def test_submitted_calls_run_and_return_their_results():
    pool = WorkerPool(2, "t")
    futures = [pool.submit(pow, i, 2) for i in range(10)]
    assert [f.result(timeout=10) for f in futures] == [i * i for i in range(10)]
    pool.shutdown()


def test_an_error_reaches_the_caller_of_result():
    pool = WorkerPool(1, "t")
    future = pool.submit(int, "not a number")
    with pytest.raises(ValueError, match="not a number"):
        future.result(timeout=10)
    pool.shutdown()


def test_threads_are_daemons_and_at_most_max_workers():
    pool = WorkerPool(3, "pool-name")
    gate = threading.Event()
    futures = [pool.submit(gate.wait, 10) for _ in range(8)]
    threads = [t for t in threading.enumerate() if t.name.startswith("pool-name_")]
    assert len(threads) == 3 and all(t.daemon for t in threads)
    gate.set()
    assert all(f.result(timeout=10) for f in futures)
    pool.shutdown()
    assert not any(t.is_alive() for t in threads)


def test_a_shut_down_pool_refuses_work():
    pool = WorkerPool(1, "t")
    pool.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(print)


def test_a_cancelled_call_does_not_run():
    pool = WorkerPool(1, "t")
    gate = threading.Event()
    ran = []
    first = pool.submit(gate.wait, 10)
    second = pool.submit(ran.append, 1)
    assert second.cancel()
    gate.set()
    first.result(timeout=10)
    pool.shutdown()
    assert ran == []


def test_at_least_one_worker():
    with pytest.raises(ValueError, match="max_workers"):
        WorkerPool(0, "t")
