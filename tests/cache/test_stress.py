"""A bounded stress test of the object cache over S3: four processes read, write and evict
through one cache directory and ``CachedFS`` while the wire throttles (503) and cuts bodies,
and the writer is killed with SIGKILL every few seconds, mid-write. Afterwards every read was
byte-exact, every published object and file is whole, no temporary file is visible, and the
cache's usage is what its files hold. The workers are ``stress_worker.py`` (see there)."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

import pfio
from pfio.cache import ObjectCache, blocks, eviction
from pfio.cache.entry_files import read_meta, read_meta_xattr
from pfio.cache.key_locks import SHARD_LOCKS
from pfio.fs.local import Local
from pfio.fs.s3 import S3
from pfio.fs.writers import is_temporary_name

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("stress_worker",
                                               os.path.join(HERE, "stress_worker.py"))
worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(worker)

#: seconds the workers run at least, and at most (a loaded machine needs longer for the kills)
DURATION, MAX_DURATION = 20.0, 45.0
#: seconds between two kills of the writer, and the kills wanted
KILL_EVERY, KILLS = 3.0, 4
MAX_BYTES = 6 << 20


def start(role: str, config: dict) -> subprocess.Popen:
    """A worker process, importing the same pfio as this one."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(pfio.__file__)))
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, os.path.join(HERE, "stress_worker.py"), role,
                             json.dumps(config)], env={**os.environ, "PYTHONPATH": path})


#: requests between two faults: a request meets a few faults in a row at most, whatever the
#: traffic, so the retries (10 attempts) always see it through
REQUESTS_PER_FAULT = 8


def inject_fault(proxy, rng: random.Random) -> None:
    """A burst of 1 to 3 503s, or a body cut short."""
    if rng.random() < 0.5:
        proxy.fail_next(rng.randrange(1, 4))
    else:
        proxy.cut_next(1, after_bytes=rng.randrange(1000, 300_000))


def kill_mid_write(writer: subprocess.Popen, results: str, phase: str) -> bool:
    """SIGKILL ``writer`` once it says it is halfway through a write of ``phase`` ("s3" or
    "local"), or after five seconds whatever it does; True when it was halfway."""
    marker = os.path.join(results, f"phase.{writer.pid}")
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            with open(marker) as f:
                halfway = f.read() == phase
        except FileNotFoundError:
            halfway = False
        if halfway:
            break
        time.sleep(0.005)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    return halfway


def kill_and_fault(workers: list[subprocess.Popen], config: dict,
                   fault_proxy) -> tuple[int, dict[str, int]]:
    """While the workers run, inject faults and kill the writer (``workers[-1]``, replaced
    by a new one each time) halfway through a write, in S3 and local files in turn; return
    the kills and how many of each kind landed halfway."""
    rng = random.Random(17)
    kills, halfway = 0, {"s3": 0, "local": 0}
    began = time.monotonic()
    next_kill = began + KILL_EVERY
    faulted_at = 0
    while time.monotonic() - began < MAX_DURATION and (
            time.monotonic() - began < DURATION or kills < KILLS or 0 in halfway.values()):
        if fault_proxy.requests - faulted_at >= REQUESTS_PER_FAULT:
            inject_fault(fault_proxy, rng)
            faulted_at = fault_proxy.requests
        time.sleep(0.05)
        if time.monotonic() >= next_kill:
            phase = ("s3", "local")[kills % 2]
            halfway[phase] += kill_mid_write(workers[-1], config["results"], phase)
            kills += 1
            workers[-1] = start("write", config)
            next_kill = time.monotonic() + KILL_EVERY + rng.random()
    return kills, halfway


def meta_at(path: str) -> dict | None:
    """The metadata of the entry file ``path``: on the file, or in its ``.meta`` file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        meta = read_meta_xattr(fd)
    finally:
        os.close(fd)
    return meta if meta is not None else read_meta(path[:-4] + ".meta")


def cached_bytes(path: str, meta: dict) -> list[tuple[int, bytes]]:
    """What the entry file ``path`` holds, as ``(offset, bytes)`` of its source: the whole
    copy, or each block present in a block file."""
    with open(path, "rb") as f:
        data = f.read()
    if meta["kind"] == ".obj":
        assert len(data) == meta["size"]
        return [(0, data)]
    _, block_size, size = blocks.HEADER.unpack_from(data)
    nblocks = -(-size // block_size)
    start = blocks._data_start(nblocks)
    present = data[blocks._BITMAP_AT:blocks._BITMAP_AT + nblocks]
    return [(i * block_size, data[start + i * block_size:start + min(size, (i + 1) * block_size)])
            for i in range(nblocks) if present[i]]


def expected_bytes(source: str, pieces: list[tuple[int, bytes]]) -> bytes | None:
    """What the object ``source`` held, told by its name (stable) or by the header at its
    start (written); None when that is not known."""
    if source in worker.STABLE:
        return worker.blob(source, "stable", worker.STABLE[source])
    if not pieces or pieces[0][0] != 0:
        return None
    name, version, size = pieces[0][1].partition(b"\n")[0].decode().split(" ")
    assert name == source
    return worker.blob(name, version, int(size))


def logged(log: str) -> list[tuple[str, str]]:
    with open(log) as f:
        return [tuple(line.split()) for line in f.read().splitlines()]


@pytest.mark.timeout(180)
def test_four_processes_with_faults_and_kills(s3_env, s3_bucket, fault_proxy, tmp_path,
                                              monkeypatch):
    direct = S3(s3_bucket, mpu_chunksize=worker.MPU_CHUNKSIZE)
    for name, size in worker.STABLE.items():
        with direct.open(name, "wb") as f:
            f.write(worker.blob(name, "stable", size))
    for sub in ("scratch", "results"):
        (tmp_path / sub).mkdir()
    config = {"bucket": s3_bucket, "endpoint": fault_proxy.endpoint,
              "cache": str(tmp_path / "cache"), "max_bytes": MAX_BYTES,
              "scratch": str(tmp_path / "scratch"), "results": str(tmp_path / "results"),
              "log": str(tmp_path / "written.log"), "stop": str(tmp_path / "stop"),
              "deadline": time.time() + 3 * MAX_DURATION}
    open(config["log"], "w").close()

    workers = [start(role, config) for role in ("read", "read", "evict", "write")]
    try:
        kills, halfway = kill_and_fault(workers, config, fault_proxy)
        open(config["stop"], "w").close()
        for process in workers:
            assert process.wait(timeout=120) == 0
    finally:  # no worker outlives the test
        open(config["stop"], "w").close()
        for process in workers:
            if process.poll() is None:
                process.kill()
                process.wait()

    # every read was byte-exact, and no worker met an error
    reports = []
    for name in os.listdir(tmp_path / "results"):
        if name.endswith(".report"):
            with open(tmp_path / "results" / name) as f:
                reports.append(json.load(f))
    assert sorted(r["role"] for r in reports) == ["evict", "read", "read", "write"]
    for report in reports:
        assert report["errors"] == [] and report["mismatches"] == [], report
    assert all(r["reads"] > 0 for r in reports if r["role"] != "write")
    assert sum(r["evictions"] for r in reports) > 0
    faults = {"kills": kills, "halfway": halfway, "503s": fault_proxy.failed,
              "cut bodies": fault_proxy.cut, "requests": fault_proxy.requests}
    assert kills >= KILLS and 0 not in halfway.values(), faults
    assert fault_proxy.failed > 0 and fault_proxy.cut > 0, faults

    # every published object and file is whole, and what was logged is there
    written = logged(config["log"])
    assert written, "no write finished"
    keys = set(direct.list("written"))
    assert {f"written/{k}" for k in keys} >= {k for k, _ in written if k.startswith("written/")}
    for key in keys:
        with direct.open(f"written/{key}", "rb") as f:
            assert worker.check_blob(f.read())[0] == f"written/{key}"
    local = Local(config["scratch"])
    names = list(local.list())
    assert names and not any(is_temporary_name(n) for n in names)
    assert any(is_temporary_name(n) for n in os.listdir(config["scratch"]))  # killed there
    for name in names:
        with local.open(name, "rb") as f:
            assert worker.check_blob(f.read())[0] == name
    for name, size in worker.STABLE.items():
        with direct.open(name, "rb") as f:
            assert f.read() == worker.blob(name, "stable", size)

    # the cache: leftovers of the killed writers go once they are old enough, what entries
    # hold is what their source held, and the usage is what the entry files hold. The
    # evicting worker may have emptied it last, so the small objects are read through it once
    # more now that every worker is gone: there is always something to check.
    cached_fs, _ = worker.filesystems(config)
    final_reads = {"reads": 0, "bytes": 0, "mismatches": []}
    for name in worker.STABLE:
        if name.startswith("stable/small"):
            worker.read_stable(cached_fs, random.Random(name), final_reads, name)
    assert final_reads["mismatches"] == []
    monkeypatch.setattr(eviction, "STALE_AFTER", 0.0)
    cache = ObjectCache(config["cache"], max_bytes=MAX_BYTES)
    usage = cache.evict()
    assert usage <= MAX_BYTES
    held, leftovers, checked = 0, [], 0
    for root, _, files in os.walk(cache.dir):
        for name in files:
            path = os.path.join(root, name)
            if not name.endswith((".obj", ".blk")):
                if not name.endswith((".meta", ".lock", SHARD_LOCKS)):
                    leftovers.append(name)
                continue
            held += os.stat(path).st_blocks * 512
            meta = meta_at(path)
            if meta is None or meta["kind"] != name[-4:]:
                continue  # published by a process killed before it wrote the metadata
            source = meta["identity"].split("|")[0].split(f"{s3_bucket}/", 1)[1]
            pieces = cached_bytes(path, meta)
            expected = expected_bytes(source, pieces)
            if expected is None:
                continue  # a written object whose first block, which names it, is not there
            assert meta["size"] == len(expected)
            for offset, data in pieces:
                assert data == expected[offset:offset + len(data)], (source, offset)
                checked += 1
    assert leftovers == [] and checked > 0
    assert usage == held == cache.usage()
