"""CachedFS: whole files and block files read through the object cache."""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
import random
import zipfile

import pytest

import pfio
from pfio.cache import CachedFS, ObjectCache
from pfio.cache.blocks import BlockFile
from pfio.cache.object_cache import Source
from pfio.containers.zip import Zip
from pfio.fs.memory import MemoryFS


class CountingMemory(MemoryFS):
    """A mem:// filesystem that counts what reaches it (the "requests")."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requests = {"open": 0, "stat": 0}

    def _open_binary(self, path, mode, *args, **kwargs):
        self.requests["open"] += not mode.writing
        return super()._open_binary(path, mode, *args, **kwargs)

    def stat(self, path):
        self.requests["stat"] += 1
        return super().stat(path)


@pytest.fixture
def store(request):
    return CountingMemory(name=f"cfs-{request.node.name}")


def write(fs, path, data):
    with fs.open(path, "wb") as f:
        f.write(data)


def cached(fs, tmp_path, validate="never", **kwargs):
    return CachedFS(fs, ObjectCache(str(tmp_path / "cache"), validate=validate), **kwargs)


def test_small_file_is_cached_whole(store, tmp_path):
    write(store, "s.bin", b"small")
    fs = cached(store, tmp_path)
    for _ in range(3):
        with fs.open("s.bin", "rb") as f:
            assert f.read() == b"small"
            assert f.fileno() >= 0  # a plain local file
    assert store.requests["open"] == 1


def test_text_mode_reads_text(store, tmp_path):
    write(store, "t.txt", "héllo\n".encode())
    with cached(store, tmp_path).open("t.txt", "r", encoding="utf-8") as f:
        assert f.read() == "héllo\n"


def test_large_file_is_read_in_blocks(store, tmp_path):
    body = os.urandom(10 * 4096 + 123)
    write(store, "big.bin", body)
    fs = cached(store, tmp_path, whole_file_limit=1000, block_size=4096)
    with fs.open("big.bin", "rb") as f:
        assert isinstance(f, BlockFile)
        assert f.read_at(5000, 100) == body[5000:5100]
        assert fs.cache.usage() < len(body)  # only the block read is on disk
        assert f.read_tail(200) == (len(body) - 200, body[-200:])
        assert f.read_at(len(body) - 10, 100) == body[-10:]
        assert f.read_at(len(body) + 5, 10) == b""
        f.seek(4000)
        assert f.read(300) == body[4000:4300]
        assert f.tell() == 4300
        f.seek(-23, io.SEEK_END)
        assert f.read() == body[-23:]
        f.seek(0)
        assert f.read() == body


def test_block_file_refuses_bad_seeks(store, tmp_path):
    write(store, "big.bin", b"z" * 5000)
    with cached(store, tmp_path, whole_file_limit=10, block_size=1024).open("big.bin", "rb") as f:
        with pytest.raises(ValueError):
            f.seek(-1)
        with pytest.raises(ValueError):
            f.seek(0, 7)


def test_closed_block_file_refuses_reads(store, tmp_path):
    write(store, "big.bin", b"z" * 5000)
    f = cached(store, tmp_path, whole_file_limit=10, block_size=1024).open("big.bin", "rb")
    f.close()
    with pytest.raises(ValueError):
        f.read_at(0, 1)


def test_blocks_come_from_the_cache_the_second_time(store, tmp_path):
    body = os.urandom(64 * 1024)
    write(store, "big.bin", body)
    fs = cached(store, tmp_path, whole_file_limit=1000, block_size=4096)
    with fs.open("big.bin", "rb") as f:
        assert f.read() == body
    opened = store.requests["open"]
    with fs.open("big.bin", "rb") as f:
        assert f.read() == body and f.was_cached
    assert store.requests["open"] == opened


def make_zip(members: int) -> tuple[bytes, dict[str, bytes]]:
    rng = random.Random(7)
    contents = {f"d/{i}.bin": rng.randbytes(3000 + i) for i in range(members)}
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as z:
        for name, body in contents.items():
            z.writestr(name, body)
    return data.getvalue(), contents


def test_zip_epoch_two_makes_no_request(store, tmp_path):
    raw, contents = make_zip(40)
    write(store, "train.zip", raw)
    cache = ObjectCache(str(tmp_path / "cache"), validate="ttl", ttl=3600)
    epoch1 = CachedFS(store, cache, whole_file_limit=1000, block_size=8192).open_zip("train.zip")
    assert {n: epoch1.open(n, "rb").read() for n in contents} == contents
    epoch1.close()
    store.requests.update(open=0, stat=0)
    # a new worker: a new zip object over the same cache
    epoch2 = CachedFS(store, cache, whole_file_limit=1000, block_size=8192).open_zip("train.zip")
    assert {n: epoch2.open(n, "rb").read() for n in contents} == contents
    assert store.requests == {"open": 0, "stat": 0}


def test_from_url_with_cache_wraps_the_filesystem(tmp_path):
    write(MemoryFS("furl"), "x/y.bin", b"through the cache")
    fs = pfio.from_url("mem://furl/x", cache=str(tmp_path / "c"))
    assert isinstance(fs, CachedFS)
    with fs.open("y.bin", "rb") as f:
        assert f.read() == b"through the cache"
    assert os.listdir(tmp_path / "c")


def test_from_url_of_a_zip_reads_its_backing_file_through_the_cache(tmp_path):
    raw, contents = make_zip(3)
    write(MemoryFS("furlzip"), "a.zip", raw)
    cache = ObjectCache(str(tmp_path / "c"))
    archive = pfio.from_url("mem://furlzip/a.zip", cache=cache)
    assert isinstance(archive, Zip) and isinstance(archive.backend, CachedFS)
    assert archive.open("d/1.bin", "rb").read() == contents["d/1.bin"]


def test_from_url_rejects_a_bad_cache_option():
    with pytest.raises(TypeError):
        pfio.from_url("mem://bad/", cache=42)


def test_write_goes_through_and_invalidates(store, tmp_path):
    write(store, "w.txt", b"old")
    fs = cached(store, tmp_path)
    assert fs.open("w.txt", "rb").read() == b"old"
    with fs.open("w.txt", "w") as f:
        f.write("new")
    assert store.open("w.txt", "rb").read() == b"new"
    assert fs.open("w.txt", "rb").read() == b"new"


def test_remove_and_rename_invalidate(store, tmp_path):
    write(store, "a", b"A")
    write(store, "b", b"B")
    fs = cached(store, tmp_path)
    assert fs.open("a", "rb").read() == b"A" and fs.open("b", "rb").read() == b"B"
    fs.rename("a", "b")
    assert fs.open("b", "rb").read() == b"A"
    fs.remove("b")
    with pytest.raises(FileNotFoundError):
        fs.open("b", "rb")


def test_changed_large_source_is_refetched_under_open(store, tmp_path):
    write(store, "big.bin", b"1" * 9000)
    fs = cached(store, tmp_path, validate="open", whole_file_limit=100, block_size=1024)
    assert fs.open("big.bin", "rb").read() == b"1" * 9000
    write(store, "big.bin", b"2" * 9500)
    assert fs.open("big.bin", "rb").read() == b"2" * 9500


def test_listing_and_stat_are_delegated(store, tmp_path):
    write(store, "dir/f", b"12345")
    fs = cached(store, tmp_path)
    assert list(fs.list("dir")) == ["f"]
    assert fs.stat("dir/f").size == 5
    assert fs.exists("dir/f") and fs.isdir("dir")
    fs.makedirs("new/sub", exist_ok=True)
    assert store.isdir("new/sub")


def test_subfs_reads_through_the_same_cache(store, tmp_path):
    write(store, "dir/f", b"sub")
    fs = cached(store, tmp_path)
    sub = fs.subfs("dir")
    assert sub.open("f", "rb").read() == b"sub" and sub.cache is fs.cache


def test_pickled_cached_fs_reads(store, tmp_path):
    write(store, "p", b"pickled")
    fs = pickle.loads(pickle.dumps(cached(MemoryFS(store.name), tmp_path)))
    assert fs.open("p", "rb").read() == b"pickled"


def _read_ranges(fs, body, seed, queue):
    rng = random.Random(seed)
    bad = 0
    with fs.open("big.bin", "rb") as f:
        for _ in range(200):
            offset = rng.randrange(len(body))
            size = rng.randrange(1, 20000)
            bad += f.read_at(offset, size) != body[offset:offset + size]
    queue.put(bad)


def test_processes_share_one_block_file(store, tmp_path):
    body = random.Random(3).randbytes(300_000)
    write(store, "big.bin", body)
    fs = cached(MemoryFS(store.name), tmp_path, whole_file_limit=1000, block_size=4096)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    readers = [ctx.Process(target=_read_ranges, args=(fs, body, s, queue)) for s in range(4)]
    for r in readers:
        r.start()
    assert [queue.get(timeout=60) for _ in readers] == [0, 0, 0, 0]
    for r in readers:
        r.join(30)
    with fs.open("big.bin", "rb") as f:
        assert f.read() == body


def test_block_size_must_be_positive(store, tmp_path):
    with pytest.raises(ValueError):
        cached(store, tmp_path, block_size=0)


def test_block_file_in_use_is_not_evicted(store, tmp_path):
    write(store, "big.bin", b"q" * 20000)
    fs = cached(store, tmp_path, whole_file_limit=100, block_size=4096)
    f = fs.open("big.bin", "rb")
    assert f.read() == b"q" * 20000
    assert fs.cache.evict(0) > 0
    assert f.read_at(0, 5) == b"qqqqq"
    f.close()
    assert fs.cache.evict(0) == 0


def test_block_cache_stays_under_the_byte_limit(store, tmp_path):
    for name in ("a", "b", "c"):
        write(store, name, name.encode() * 40_000)
    cache = ObjectCache(str(tmp_path / "cache"), max_bytes=100_000)
    fs = CachedFS(store, cache, whole_file_limit=100, block_size=4096)
    for name in ("a", "b", "c"):
        with fs.open(name, "rb") as f:
            assert f.read() == name.encode() * 40_000
    assert cache.usage() <= 100_000


def test_a_file_grown_past_the_whole_file_limit_switches_to_blocks(store, tmp_path):
    write(store, "grows", b"s" * 50)
    fs = cached(store, tmp_path, validate="open", whole_file_limit=100, block_size=64)
    assert fs.open("grows", "rb").read() == b"s" * 50
    write(store, "grows", b"L" * 500)
    with fs.open("grows", "rb") as f:
        assert isinstance(f, BlockFile) and f.read() == b"L" * 500
    assert not os.path.exists(fs.cache.entry_path(Source(store, "grows"), ".obj"))
