"""The PFIO 2.x contract of the index caches: NaiveCache, FileCache, MultiprocessFileCache,
ReadOnlyFileCache."""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle

import pytest

from pfio.cache import FileCache, MultiprocessFileCache, NaiveCache, ReadOnlyFileCache, index_cache
from pfio.cache.index_cache import ENTRY

WRITABLE = ["naive", "file", "multiprocess"]


def make(kind: str, tmp_path, length: int = 8, **kwargs):
    if kind == "naive":
        return NaiveCache(length, **kwargs)
    if kind == "file":
        return FileCache(length, dir=str(tmp_path), **kwargs)
    return MultiprocessFileCache(length, dir=str(tmp_path), **kwargs)


@pytest.mark.parametrize("kind", WRITABLE)
def test_put_then_get_returns_the_bytes(kind, tmp_path):
    with make(kind, tmp_path) as cache:
        assert cache.put(3, b"three") is True
        assert cache.get(3) == b"three"


@pytest.mark.parametrize("kind", WRITABLE)
def test_empty_slot_is_none(kind, tmp_path):
    with make(kind, tmp_path) as cache:
        assert cache.get(0) is None


@pytest.mark.parametrize("kind", WRITABLE)
def test_put_is_write_once(kind, tmp_path):
    with make(kind, tmp_path) as cache:
        assert cache.put(1, b"first")
        assert cache.put(1, b"second") is False
        assert cache.get(1) == b"first"


@pytest.mark.parametrize("kind", WRITABLE)
def test_empty_bytes_are_a_hit(kind, tmp_path):
    with make(kind, tmp_path) as cache:
        assert cache.put(2, b"")
        assert cache.get(2) == b""


@pytest.mark.parametrize("kind", WRITABLE)
@pytest.mark.parametrize("index", [-9, 8, 100])
def test_get_out_of_range_raises_index_error(kind, tmp_path, index):
    with make(kind, tmp_path) as cache, pytest.raises(IndexError):
        cache.get(index)


@pytest.mark.parametrize("kind", WRITABLE)
@pytest.mark.parametrize("index", [-9, 8])
def test_put_out_of_range_raises_index_error(kind, tmp_path, index):
    with make(kind, tmp_path) as cache, pytest.raises(IndexError):
        cache.put(index, b"x")


@pytest.mark.parametrize("kind", ["file", "multiprocess"])
def test_file_caches_refuse_negative_indices(kind, tmp_path):
    with make(kind, tmp_path) as cache:
        with pytest.raises(IndexError):
            cache.put(-1, b"x")
        with pytest.raises(IndexError):
            cache.get(-1)


@pytest.mark.parametrize("kind", WRITABLE)
@pytest.mark.parametrize("length", [0, -3, 2 ** 64])
def test_bad_length_raises_value_error(kind, tmp_path, length):
    with pytest.raises(ValueError):
        make(kind, tmp_path, length=length)


@pytest.mark.parametrize("kind", WRITABLE)
def test_len_is_the_length(kind, tmp_path):
    with make(kind, tmp_path, length=5) as cache:
        assert len(cache) == 5


@pytest.mark.parametrize("kind", WRITABLE)
def test_do_pickle_round_trips_objects(kind, tmp_path):
    with make(kind, tmp_path, do_pickle=True) as cache:
        cache.put(0, {"a": [1, 2]})
        assert cache.get(0) == {"a": [1, 2]}


@pytest.mark.parametrize("kind", WRITABLE)
def test_get_and_cache_calls_the_backend_once(kind, tmp_path):
    calls = []

    def backend(i):
        calls.append(i)
        return b"v%d" % i

    with make(kind, tmp_path) as cache:
        assert cache.get_and_cache(4, backend) == b"v4"
        assert cache.get_and_cache(4, backend) == b"v4"
    assert calls == [4]


def test_safety_properties():
    assert NaiveCache(2).multiprocess_safe is False
    assert NaiveCache(2, multithread_safe=True).multithread_safe is True


def test_file_cache_is_multiprocess_safe_only_once_frozen(tmp_path):
    with FileCache(2, dir=str(tmp_path)) as cache:
        assert cache.multiprocess_safe is False
        cache.preserve("p")
        assert cache.multiprocess_safe is True and cache.frozen


def test_multiprocess_file_cache_is_safe(tmp_path):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        assert cache.multiprocess_safe and cache.multithread_safe


@pytest.mark.parametrize("kind", ["file", "multiprocess"])
def test_size_limit_freezes_the_cache(kind, tmp_path):
    # the limit counts the whole file: 4 entries of 16 bytes, then data
    with make(kind, tmp_path, length=4, cache_size_limit=4 * 16 + 10) as cache:
        assert cache.put(0, b"12345")
        assert cache.put(1, b"123456") is False
        assert cache.frozen
        assert cache.put(2, b"1") is False
        assert cache.get(0) == b"12345"


@pytest.mark.parametrize("kind", ["file", "multiprocess"])
def test_negative_size_limit_raises(kind, tmp_path):
    with pytest.raises(ValueError):
        make(kind, tmp_path, cache_size_limit=-1)


@pytest.mark.parametrize("kind", ["file", "multiprocess"])
def test_closed_cache_gets_none_and_puts_false(kind, tmp_path):
    cache = make(kind, tmp_path)
    cache.put(0, b"x")
    cache.close()
    assert cache.get(0) is None
    assert cache.put(1, b"y") is False


@pytest.mark.parametrize("kind", ["file", "multiprocess"])
def test_close_removes_the_temporary_file(kind, tmp_path):
    cache = make(kind, tmp_path)
    cache.put(0, b"x")
    cache.close()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("writer", ["file", "multiprocess"])
@pytest.mark.parametrize("reader", ["file", "multiprocess", "readonly"])
def test_preserve_then_preload_across_classes(writer, reader, tmp_path):
    with make(writer, tmp_path, length=3) as cache:
        for i in range(3):
            cache.put(i, bytes([i]) * (i + 1))
        assert cache.preserve("kept")
    if reader == "readonly":
        other = ReadOnlyFileCache(3, dir=str(tmp_path))
    else:
        other = make(reader, tmp_path, length=3)
    with other:
        assert other.preload("kept")
        assert [other.get(i) for i in range(3)] == [b"\x00", b"\x01\x01", b"\x02\x02\x02"]
        assert other.frozen


def test_preserved_file_survives_close(tmp_path):
    cache = MultiprocessFileCache(2, dir=str(tmp_path))
    cache.put(0, b"a")
    cache.preserve("kept")
    cache.close()
    assert os.listdir(tmp_path) == ["kept"]


def test_preserve_refuses_an_existing_name(tmp_path):
    (tmp_path / "kept").write_bytes(b"other")
    with FileCache(2, dir=str(tmp_path)) as cache:
        assert cache.preserve("kept") is False
        assert not cache.frozen
    assert (tmp_path / "kept").read_bytes() == b"other"


def test_preserve_overwrite_replaces_the_file(tmp_path):
    (tmp_path / "kept").write_bytes(b"other")
    with FileCache(2, dir=str(tmp_path)) as cache:
        cache.put(1, b"new")
        assert cache.preserve("kept", overwrite=True)
    with FileCache(2, dir=str(tmp_path)) as again:
        again.preload("kept")
        assert again.get(1) == b"new"


def test_frozen_cache_refuses_puts_after_preserve(tmp_path):
    with FileCache(2, dir=str(tmp_path)) as cache:
        cache.preserve("kept")
        assert cache.put(0, b"late") is False


def test_preload_of_a_missing_name_is_false(tmp_path):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        assert cache.preload("nothing") is False
        assert not cache.frozen


def test_preload_of_a_frozen_cache_is_false(tmp_path):
    with FileCache(2, dir=str(tmp_path)) as cache:
        cache.preserve("a")
        assert cache.preload("a") is False


def test_preload_of_a_too_short_file_raises(tmp_path):
    (tmp_path / "short").write_bytes(ENTRY.pack(0, -1))
    with FileCache(4, dir=str(tmp_path)) as cache, pytest.raises(ValueError):
        cache.preload("short")


def test_readonly_cache_rejects_an_incomplete_file(tmp_path):
    with FileCache(2, dir=str(tmp_path)) as cache:
        cache.put(0, b"only one")
        cache.preserve("half")
    with pytest.raises(RuntimeError):
        ReadOnlyFileCache(2, dir=str(tmp_path)).preload("half")


def test_readonly_cache_cannot_put_or_preserve(tmp_path):
    cache = ReadOnlyFileCache(2, dir=str(tmp_path))
    with pytest.raises(io.UnsupportedOperation):
        cache.put(0, b"x")
    with pytest.raises(io.UnsupportedOperation):
        cache.preserve("x")


def test_readonly_cache_gets_none_before_preload(tmp_path):
    assert ReadOnlyFileCache(2, dir=str(tmp_path)).get(0) is None


def test_hand_built_file_of_the_documented_format_loads(tmp_path):
    # index of (offset uint64, length int64) entries, (0, -1) for empty, data after it
    index = ENTRY.pack(48, 3) + ENTRY.pack(0, -1) + ENTRY.pack(51, 2)
    (tmp_path / "hand").write_bytes(index + b"abc" + b"de")
    with MultiprocessFileCache(3, dir=str(tmp_path)) as cache:
        assert cache.preload("hand")
        assert [cache.get(i) for i in range(3)] == [b"abc", None, b"de"]


def test_preserved_file_has_the_documented_format(tmp_path):
    with FileCache(2, dir=str(tmp_path)) as cache:
        cache.put(1, b"xyz")
        cache.preserve("out")
    raw = (tmp_path / "out").read_bytes()
    assert ENTRY.unpack_from(raw, 0) == (0, -1)
    offset, length = ENTRY.unpack_from(raw, 16)
    assert raw[offset:offset + length] == b"xyz" and offset >= 32


def test_torn_index_entry_reads_as_a_miss(tmp_path):
    # an entry half written: the new length with the old offset 0 (inside the index)
    (tmp_path / "torn").write_bytes(ENTRY.pack(0, 5) + b"hello")
    with FileCache(1, dir=str(tmp_path)) as cache:
        cache.preload("torn")
        assert cache.get(0) is None


@pytest.mark.parametrize("kind", WRITABLE)
def test_pickled_cache_reads_the_same_data(kind, tmp_path):
    with make(kind, tmp_path) as cache:
        cache.put(5, b"five")
        copy = pickle.loads(pickle.dumps(cache))
        assert copy.get(5) == b"five"


def test_pickled_multiprocess_cache_shares_puts(tmp_path):
    with MultiprocessFileCache(4, dir=str(tmp_path)) as cache:
        copy = pickle.loads(pickle.dumps(cache))
        copy.put(2, b"from the copy")
        assert cache.get(2) == b"from the copy"


def test_pickled_readonly_cache_is_preloaded(tmp_path):
    with FileCache(1, dir=str(tmp_path)) as cache:
        cache.put(0, b"z")
        cache.preserve("ro")
    ro = ReadOnlyFileCache(1, dir=str(tmp_path))
    ro.preload("ro")
    assert pickle.loads(pickle.dumps(ro)).get(0) == b"z"


def _try_preserve(cache, queue):
    try:
        cache.preserve("from-worker")
        queue.put("preserved")
    except RuntimeError:
        queue.put("RuntimeError")


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_only_the_creating_process_may_preserve(tmp_path, start_method):
    ctx = multiprocessing.get_context(start_method)
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        queue = ctx.Queue()
        worker = ctx.Process(target=_try_preserve, args=(cache, queue))
        worker.start()
        worker.join(60)
        assert queue.get(timeout=10) == "RuntimeError"
        assert not (tmp_path / "from-worker").exists()
        assert cache.preserve("from-creator")


def test_a_pickled_copy_in_the_same_process_may_not_preserve(tmp_path):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        with pytest.raises(RuntimeError):
            pickle.loads(pickle.dumps(cache)).preserve("x")


def test_worker_close_keeps_the_file(tmp_path):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        cache.put(0, b"kept")
        pickle.loads(pickle.dumps(cache)).close()
        assert cache.get(0) == b"kept"


def test_default_dir_is_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with FileCache(1) as cache:
        assert cache.dir == str(tmp_path / "pfio")
        assert os.path.dirname(cache.path) == str(tmp_path / "pfio")


def test_only_the_creating_process_may_preload_a_multiprocess_cache(tmp_path):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        cache.preserve("p")
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        with pytest.raises(RuntimeError):
            pickle.loads(pickle.dumps(cache)).preload("p")


@pytest.mark.parametrize("step", [1, 1 << 40])
def test_data_appended_after_the_map_is_read(tmp_path, monkeypatch, step):
    # step 1: the reader maps the grown file again; 2**40: it reads with pread
    monkeypatch.setattr(index_cache, "_REMAP_STEP", step)
    with MultiprocessFileCache(64, dir=str(tmp_path)) as cache:
        assert cache.get(0) is None  # maps the file while it holds only the index
        for i in range(64):
            cache.put(i, bytes([i]) * 1000)
        assert all(cache.get(i) == bytes([i]) * 1000 for i in range(64))
