"""ObjectCache: one download shared by processes, atomic publication, eviction, validation."""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
import signal
import stat
import time
import zipfile

import pytest

import pfio
from pfio.cache import ObjectCache
from pfio.cache.object_cache import Source, default_object_cache
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS


class CountingLocal(Local):
    """A local filesystem that logs every open for reading to ``log`` (one line each, so
    opens in child processes count too) and can wait ``delay`` seconds in it."""

    log = ""
    delay = 0.0

    def open(self, path, mode="rb", *args, **kwargs):
        if "r" in mode:
            with open(self.log, "a") as f:
                f.write(path + "\n")
            time.sleep(self.delay)
        return super().open(path, mode, *args, **kwargs)


class StallingLocal(Local):
    """A local filesystem whose files stop after the first MiB: a download hangs there."""

    def open(self, path, mode="rb", *args, **kwargs):
        return _Stalling(super().open(path, mode, *args, **kwargs))


class _Stalling(io.RawIOBase):
    def __init__(self, real):
        self.real, self.served = real, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.served >= 1 << 20:
            time.sleep(3600)
        data = self.real.read(min(len(buffer), (1 << 20) - self.served))
        buffer[:len(data)] = data
        self.served += len(data)
        return len(data)


@pytest.fixture
def src(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    return root


@pytest.fixture
def counting(tmp_path, src):
    fs = CountingLocal(str(src))
    fs.log = str(tmp_path / "opens.log")
    open(fs.log, "w").close()
    return fs


def opens(fs) -> int:
    with open(fs.log) as f:
        return len(f.read().splitlines())


def cache_in(tmp_path, **kwargs) -> ObjectCache:
    return ObjectCache(str(tmp_path / "cache"), **kwargs)


def entry_files(cache: ObjectCache, suffix: str) -> list[str]:
    found = []
    for shard in os.listdir(cache.dir):
        if os.path.isdir(os.path.join(cache.dir, shard)):
            found += [n for n in os.listdir(os.path.join(cache.dir, shard)) if n.endswith(suffix)]
    return found


def test_path_gives_a_local_copy(tmp_path, src):
    (src / "a.bin").write_bytes(b"payload" * 100)
    cache = cache_in(tmp_path)
    with cache.path(str(src / "a.bin")) as local:
        assert local.startswith(cache.dir)
        with open(local, "rb") as f:
            assert f.read() == b"payload" * 100


def test_second_read_does_not_download_again(tmp_path, src, counting):
    (src / "a.bin").write_bytes(b"x" * 1000)
    cache = cache_in(tmp_path)
    for _ in range(3):
        with cache.open_source(Source(counting, "a.bin")) as f:
            assert f.read() == b"x" * 1000
    assert opens(counting) == 1


def _read_through(cache, fs, queue):
    with cache.open_source(Source(fs, "big.bin")) as f:
        queue.put(f.read() == (b"0123456789" * 300_000))


def test_concurrent_first_readers_share_one_download(tmp_path, src, counting):
    (src / "big.bin").write_bytes(b"0123456789" * 300_000)
    counting.delay = 0.2  # the download is still going while the others arrive
    cache = cache_in(tmp_path)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    readers = [ctx.Process(target=_read_through, args=(cache, counting, queue))
               for _ in range(8)]
    for r in readers:
        r.start()
    results = [queue.get(timeout=60) for _ in readers]
    for r in readers:
        r.join(30)
    assert results == [True] * 8
    assert opens(counting) == 1


def _download(cache, fs):
    cache.open_source(Source(fs, "big.bin"))


def test_download_killed_midway_is_never_served(tmp_path, src):
    body = os.urandom(3 << 20)
    (src / "big.bin").write_bytes(body)
    cache = cache_in(tmp_path)
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_download, args=(cache, StallingLocal(str(src))))
    child.start()
    deadline = time.monotonic() + 30
    while not any(os.path.getsize(os.path.join(root, n)) >= 1 << 20
                  for root, _, names in os.walk(cache.dir) for n in names
                  if n.endswith(".part")):
        assert time.monotonic() < deadline, "the download never started"
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.join(30)
    assert entry_files(cache, ".obj") == []
    with cache.open_source(Source(Local(str(src)), "big.bin")) as f:
        assert f.read() == body
    cache.usage()  # a scan removes the abandoned partial download
    assert entry_files(cache, ".part") == []


def test_changed_source_is_fetched_again_under_open(tmp_path, src):
    target = src / "a.txt"
    target.write_bytes(b"version 1")
    cache = cache_in(tmp_path, validate="open")
    with cache.path(str(target)) as local:
        assert open(local, "rb").read() == b"version 1"
    target.write_bytes(b"version two")
    with cache.path(str(target)) as local:
        assert open(local, "rb").read() == b"version two"


def test_same_size_change_is_seen_through_the_mtime(tmp_path, src):
    target = src / "a.txt"
    target.write_bytes(b"aaaa")
    os.utime(target, (1_000_000, 1_000_000))
    cache = cache_in(tmp_path, validate="open")
    cache.get_path(str(target))
    target.write_bytes(b"bbbb")
    os.utime(target, (2_000_000, 2_000_000))
    with cache.path(str(target)) as local:
        assert open(local, "rb").read() == b"bbbb"


def test_changed_source_is_served_stale_under_never(tmp_path, src):
    target = src / "a.txt"
    target.write_bytes(b"version 1")
    cache = cache_in(tmp_path, validate="never")
    cache.get_path(str(target))
    target.write_bytes(b"version two")
    with cache.path(str(target)) as local:
        assert open(local, "rb").read() == b"version 1"


@pytest.mark.parametrize(("ttl", "expected"), [(0.0, b"version two"), (3600.0, b"version 1")])
def test_ttl_policy_checks_after_the_ttl(tmp_path, src, ttl, expected):
    target = src / "a.txt"
    target.write_bytes(b"version 1")
    cache = cache_in(tmp_path, validate="ttl", ttl=ttl)
    cache.get_path(str(target))
    target.write_bytes(b"version two")
    with cache.path(str(target)) as local:
        assert open(local, "rb").read() == expected


def test_eviction_keeps_files_in_use(tmp_path, src):
    for name in "abcd":
        (src / name).write_bytes(name.encode() * 100_000)
    cache = cache_in(tmp_path, max_bytes=250_000)
    with cache.path(str(src / "a")) as in_use:
        cache.get_path(str(src / "b"))
        cache.get_path(str(src / "c"))  # 300 kB: the oldest not in use (b) goes
        assert os.path.exists(in_use)
        assert open(in_use, "rb").read() == b"a" * 100_000
        assert cache.usage() <= 250_000
    cache.get_path(str(src / "d"))  # a is free now and the least recently used
    assert cache.usage() <= 250_000
    assert len(entry_files(cache, ".obj")) == 2


def test_evicted_file_is_fetched_again(tmp_path, src):
    (src / "a").write_bytes(b"a" * 1000)
    cache = cache_in(tmp_path)
    cache.get_path(str(src / "a"))
    assert cache.evict(0) == 0
    with cache.path(str(src / "a")) as local:
        assert open(local, "rb").read() == b"a" * 1000


def test_open_file_is_not_evicted_until_closed(tmp_path, src):
    (src / "a").write_bytes(b"a" * 5000)
    cache = cache_in(tmp_path)
    f = cache.open(str(src / "a"))
    assert cache.evict(0) > 0
    assert os.path.exists(f.name)
    f.close()
    assert cache.evict(0) == 0
    assert not os.path.exists(f.name)


def test_cache_directory_is_private(tmp_path):
    cache = cache_in(tmp_path)
    assert stat.S_IMODE(os.stat(cache.dir).st_mode) == 0o700


def test_default_directory_is_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ObjectCache().dir == str(tmp_path / "pfio" / "objects")


def test_default_object_cache_is_shared():
    assert default_object_cache() is default_object_cache()


class EndpointFS(MemoryFS):
    """A backend whose data also depends on an endpoint, as its identity says."""

    def __init__(self, endpoint, **kwargs):
        super().__init__(**kwargs)
        self.endpoint = endpoint

    def identity(self, path):
        return f"{super().identity(path)}|endpoint={self.endpoint}"


def test_two_endpoints_never_share_an_entry(tmp_path):
    one, two = EndpointFS("http://a:9000", name="ep"), EndpointFS("http://b:9000", name="ep")
    with one.open("k", "wb") as f:
        f.write(b"from a")
    cache = cache_in(tmp_path, validate="never")
    assert cache.open_source(Source(one, "k")).read() == b"from a"
    with one.open("k", "wb") as f:  # same store: b now serves other bytes under the key
        f.write(b"from b")
    assert Source(one, "k").key != Source(two, "k").key
    assert cache.open_source(Source(two, "k")).read() == b"from b"


def test_two_memory_stores_never_share_an_entry(tmp_path):
    for store in ("s1", "s2"):
        with pfio.open_url(f"mem://{store}/k", "wb") as f:
            f.write(store.encode())
    cache = cache_in(tmp_path)
    assert [cache.open(f"mem://{s}/k").read() for s in ("s1", "s2")] == [b"s1", b"s2"]


def test_zip_member_url(tmp_path):
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("dir/m.txt", b"member bytes")
    with MemoryFS("zips").open("a.zip", "wb") as f:
        f.write(data.getvalue())
    cache = cache_in(tmp_path)
    with cache.path("mem://zips/a.zip/dir/m.txt") as local:
        assert open(local, "rb").read() == b"member bytes"


def test_missing_source_raises_and_leaves_nothing(tmp_path, src):
    cache = cache_in(tmp_path)
    with pytest.raises(FileNotFoundError):
        cache.get_path(str(src / "missing"))
    assert entry_files(cache, ".obj") == [] and entry_files(cache, ".part") == []


def test_directory_raises(tmp_path, src):
    with pytest.raises(IsADirectoryError):
        cache_in(tmp_path).get_path(str(src))


def test_invalidate_forgets_the_copy(tmp_path, src, counting):
    (src / "a").write_bytes(b"1")
    cache = cache_in(tmp_path, validate="never")
    cache.open_source(Source(counting, "a")).close()
    cache.invalidate_source(Source(counting, "a"))
    cache.open_source(Source(counting, "a")).close()
    assert opens(counting) == 2


def test_unknown_policy_raises(tmp_path):
    with pytest.raises(ValueError):
        cache_in(tmp_path, validate="sometimes")


def test_pickled_cache_uses_the_same_directory(tmp_path, src):
    (src / "a").write_bytes(b"1")
    cache = cache_in(tmp_path)
    first = cache.get_path(str(src / "a"))
    assert pickle.loads(pickle.dumps(cache)).get_path(str(src / "a")) == first
