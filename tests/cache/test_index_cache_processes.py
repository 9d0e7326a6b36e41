"""Index caches under several processes, killed writers and full disks."""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from pfio.cache import FileCache, MultiprocessFileCache
from pfio.cache.index_cache import ENTRY

SLOTS = 200


def payload(i: int) -> bytes:
    """Deterministic bytes of a slot, of varying length (1 .. ~8 KiB)."""
    seed = hashlib.sha256(b"%d" % i).digest()
    return (seed * 300)[: 1 + (i * 37) % 8000]


def _fill_and_read(cache, worker, results):
    order = list(range(SLOTS))
    order = order[worker * 25:] + order[:worker * 25]
    stored = bad = 0
    for i in order:
        data = cache.get(i)
        if data is None:
            stored += cache.put(i, payload(i))
            data = cache.get(i)
        bad += data != payload(i)
    results.put((stored, bad))


def test_eight_processes_fill_and_read_one_cache(tmp_path):
    ctx = multiprocessing.get_context("fork")
    with MultiprocessFileCache(SLOTS, dir=str(tmp_path)) as cache:
        results = ctx.Queue()
        workers = [ctx.Process(target=_fill_and_read, args=(cache, w, results))
                   for w in range(8)]
        for w in workers:
            w.start()
        outcome = [results.get(timeout=60) for _ in workers]
        for w in workers:
            w.join(30)
        assert sum(bad for _, bad in outcome) == 0
        assert sum(stored for stored, _ in outcome) == SLOTS  # each slot written once
        assert all(cache.get(i) == payload(i) for i in range(SLOTS))


def _put_forever(cache, started):
    big = os.urandom(1 << 20)
    for i in range(len(cache)):
        cache.put(i, big[:-1] + bytes([i % 256]))
        if i == 3:
            started.set()


def test_sigkill_during_puts_leaves_only_complete_entries(tmp_path):
    ctx = multiprocessing.get_context("fork")
    with MultiprocessFileCache(400, dir=str(tmp_path)) as cache:
        started = ctx.Event()
        writer = ctx.Process(target=_put_forever, args=(cache, started))
        writer.start()
        assert started.wait(60)
        os.kill(writer.pid, signal.SIGKILL)
        writer.join(30)
        filled = [i for i in range(len(cache)) if cache.get(i) is not None]
        assert 4 <= len(filled) < len(cache)
        assert all(len(cache.get(i)) == 1 << 20 and cache.get(i)[-1] == i % 256
                   for i in filled)
        # the killed writer's lock is gone: this process can still put
        empty = next(i for i in range(len(cache)) if i not in filled)
        assert cache.put(empty, b"after the kill")
        assert cache.get(empty) == b"after the kill"


def test_orphaned_data_after_a_killed_put_is_ignored(tmp_path):
    # a writer killed after its data write and before its index write leaves bytes
    # that no entry points to
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        with open(cache.path, "ab") as f:
            f.write(b"orphan")
        assert cache.get(0) is None
        assert cache.put(0, b"real")
        assert cache.get(0) == b"real"


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A 1 MiB tmpfs (needs root and mount)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield str(mount)
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.parametrize("cls", [FileCache, MultiprocessFileCache])
def test_full_disk_warns_and_put_returns_false(tiny_tmpfs, cls):
    with cls(4, dir=tiny_tmpfs) as cache:
        assert cache.put(0, b"small")
        with pytest.warns(RuntimeWarning):
            assert cache.put(1, os.urandom(2 << 20)) is False
        assert cache.get(1) is None
        # the failed write was cut off again: there is room for more
        assert cache.put(2, b"x" * 1000)
        assert cache.get(0) == b"small" and cache.get(2) == b"x" * 1000
        assert os.path.getsize(cache.path) == 4 * ENTRY.size + 5 + 1000


def test_file_size_limit_of_the_process_warns_and_put_returns_false(tmp_path):
    # a real OS refusal without root: RLIMIT_FSIZE makes write() fail with EFBIG
    code = textwrap.dedent(f"""
        import resource, signal, warnings
        from pfio.cache import MultiprocessFileCache
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        cache = MultiprocessFileCache(4, dir={str(tmp_path)!r})
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok = cache.put(0, b"x" * (100 * 1024))
        print(ok, [w.category.__name__ for w in caught], cache.get(0), cache.put(1, b"fits"),
              cache.get(1))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "['RuntimeWarning']", "None", "True", "b'fits'"]


def test_close_in_a_forked_child_keeps_the_parents_file(tmp_path):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        cache.put(0, b"parent")
        pid = os.fork()
        if pid == 0:  # the child closes its copy and leaves at once
            with contextlib.suppress(BaseException):
                cache.close()
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.path.exists(cache.path)
        assert cache.get(0) == b"parent"


def test_hit_after_fork_reads_through_a_new_descriptor(tmp_path):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        cache.put(0, b"before fork")
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            ok = cache.get(0) == b"before fork" and cache.put(1, b"child")
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
        os.close(write)
        assert os.read(read, 1) == b"1"
        os.waitpid(pid, 0)
        os.close(read)
        assert cache.get(1) == b"child"
