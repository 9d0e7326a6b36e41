"""The bounded node-local shard cache of PfioWebDataset over an index: within its limit
during an epoch over 3x its size, each shard downloaded once by 2 ranks x 2 workers sharing
it, a download killed by SIGKILL leaves nothing that reads as complete."""

import collections
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pfio.integrations.shard_cache import parse_size
from pfio.integrations.shards import ShardWriter, read_index
from pfio.integrations.torch import PfioWebDataset


def _write(base, n, maxcount, payload):
    if "://" not in base:
        os.makedirs(base, exist_ok=True)
    with ShardWriter(f"{base}/s-%03d.tar", maxcount=maxcount) as sink:
        for i in range(n):
            sink.write({"__key__": f"{i:04d}", "bin": bytes([i % 256]) * payload})
    return base


def _key(sample):
    return sample["__key__"]


def _cached_bytes(root) -> int:
    """The bytes of the shards cached under ``root`` (their sizes: disk blocks jitter while
    ext4 settles what it allocated); an entry evicted between the listing and its stat (the
    reader's thread evicts while the test looks) counts for nothing."""
    total = 0
    for entry in root.rglob("*.obj"):
        try:
            total += entry.stat().st_size
        except FileNotFoundError:
            pass
    return total


def test_the_cache_stays_within_its_limit_over_an_epoch_of_three_times_it(tmp_path):
    data = _write(str(tmp_path / "d"), 120, 10, 4000)  # 12 shards of ~41 kB
    total = sum(e.size for e in read_index(data).shards)
    limit = total // 3
    cache_dir = str(tmp_path / "cache")
    dataset = PfioWebDataset(data, cache_dir=cache_dir, cache_limit=limit, transform=_key,
                             shuffle=True, shuffle_block=15)
    keys, peak = [], 0
    for epoch in range(2):
        dataset.set_epoch(epoch)
        for key in dataset:
            keys.append(key)
            peak = max(peak, _cached_bytes(tmp_path / "cache"))
    assert sorted(keys) == sorted([f"{i:04d}" for i in range(120)] * 2)
    assert 0 < peak <= limit


def test_later_epochs_read_cached_shards(tmp_path, monkeypatch):
    data = _write(str(tmp_path / "d"), 40, 10, 100)
    dataset = PfioWebDataset(data, cache_dir=str(tmp_path / "c"), transform=_key)
    first = list(dataset)
    for entry in read_index(data).shards:  # the sources are gone: only the cache can serve
        os.remove(entry.url)
    dataset.set_epoch(1)
    assert list(dataset) == first


def test_predownload_keeps_that_many_samples_ahead(tmp_path):
    data = _write(str(tmp_path / "d"), 40, 10, 100)
    cache_dir = str(tmp_path / "c")
    dataset = PfioWebDataset(data, cache_dir=cache_dir, predownload=20, window=5,
                             transform=_key)
    samples = iter(dataset)
    assert next(samples) == "0000"
    entries = []
    deadline = time.monotonic() + 30
    while len(entries) < 3 and time.monotonic() < deadline:  # shards of samples 0 to 20
        entries = list((tmp_path / "c").rglob("*.obj"))
        time.sleep(0.01)
    assert len(entries) == 3  # the fourth waits until sample 10 is taken
    assert [next(samples) for _ in range(39)][-1] == "0039"
    assert len(list((tmp_path / "c").rglob("*.obj"))) == 4


def test_sizes_and_arguments(tmp_path):
    assert parse_size("20GB") == 20 * 10**9 and parse_size("512MiB") == 512 << 20
    assert parse_size(1000) == 1000
    with pytest.raises(ValueError, match="20 parsecs"):
        parse_size("20 parsecs")
    data = _write(str(tmp_path / "d"), 4, 2, 10)
    with pytest.raises(ValueError, match="cache_dir"):
        PfioWebDataset(data, cache_limit="1GB")


RANK = """
import json, sys, torch
from pfio.integrations.torch import PfioWebDataset
url, rank, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3]
keys = []
for epoch in range(2):
    dataset = PfioWebDataset(url, rank=rank, world_size=2, shuffle=True, seed=epoch,
                             cache_dir=cache, predownload=8, transform=lambda s: s["__key__"])
    dataset.set_epoch(epoch)
    loader = torch.utils.data.DataLoader(dataset, batch_size=4, num_workers=2)
    keys += [k for batch in loader for k in batch]
print(json.dumps(keys))
"""


def _proxied(monkeypatch, s3_bucket, fault_proxy, n, maxcount, payload, name):
    base = _write(f"s3://{s3_bucket}/{name}", n, maxcount, payload)
    monkeypatch.setenv("S3_ENDPOINT", fault_proxy.endpoint)
    fault_proxy.rewrite_next(10**9, lambda answer: None)  # logs every answered GET
    return base


def test_each_shard_is_downloaded_once_by_two_ranks_of_two_workers(
        tmp_path, s3_env, s3_bucket, fault_proxy, monkeypatch):
    base = _proxied(monkeypatch, s3_bucket, fault_proxy, 96, 8, 3000, "once")
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    cache = str(tmp_path / "cache")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    ranks = [subprocess.Popen([sys.executable, str(script), base, str(r), cache],
                              stdout=subprocess.PIPE, env=env) for r in range(2)]
    outputs = [json.loads(p.communicate(timeout=300)[0]) for p in ranks]
    assert all(p.returncode == 0 for p in ranks)
    keys = collections.Counter(k for out in outputs for k in out)
    assert set(keys) == {f"{i:04d}" for i in range(96)}
    shard_gets = collections.Counter(r.target.split("?")[0]
                                     for r in fault_proxy.rewritten_requests
                                     if ".tar" in r.target)
    assert len(shard_gets) == 12 and set(shard_gets.values()) == {1}


KILLED = """
import sys
from pfio.integrations.shard_cache import ShardCache
from pfio.integrations.shards import read_index
index = read_index(sys.argv[1])
ShardCache(sys.argv[2], None, index).open(index.shards[0]).close()
"""


def test_a_download_killed_mid_way_leaves_nothing_that_reads_as_complete(
        tmp_path, s3_env, s3_bucket, fault_proxy, monkeypatch):
    base = _proxied(monkeypatch, s3_bucket, fault_proxy, 1, 1, 48 << 20, "killed")
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    cache = tmp_path / "cache"
    victim = subprocess.Popen([sys.executable, str(script), base, str(cache)],
                              env={**os.environ, "PYTHONPATH": os.getcwd()},
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        part = None
        while time.monotonic() < deadline and part is None and victim.poll() is None:
            part = next((p for p in cache.rglob("*.part") if p.stat().st_size > 0), None)
            time.sleep(0.001)
        assert part is not None and victim.poll() is None, "the download ended unseen"
    finally:
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()
    assert not list(cache.rglob("*.obj"))
    index = read_index(base)
    dataset = PfioWebDataset(base, cache_dir=str(cache))
    [sample] = list(dataset)
    assert sample["bin"] == bytes(48 << 20)
    assert [p.name for p in cache.rglob("*.part")] == []
    assert len(list(cache.rglob("*.obj"))) == 1 and index.shards[0].samples == 1
