"""PFIO 2.x's ``trace=True``: the calls of a filesystem or a cache made with it appear in
pytorch-pfn-extras' profiler under PFIO 2.x's names, while :mod:`pfio.trace` goes on
counting everything."""

from __future__ import annotations

import json
import pickle

import pytest

import pfio
import pfio.trace
from pfio.cache import FileCache, HTTPCache, MultiprocessFileCache
from pfio.testing import ZipForTest, make_http_server
from pfio.trace import ppe as ppe_bridge
from pfio.v2 import Local, from_url

ppe = pytest.importorskip("pytorch_pfn_extras")


def _recorded() -> list[str]:
    state = ppe.profiler.get_tracer().state_dict()
    return [event["name"] for event in json.loads(state["_event_list"])]


@pytest.fixture(autouse=True)
def clear_profiler():
    ppe.profiler.clear_tracer()
    yield
    ppe.profiler.clear_tracer()


def test_local_records_open_write_and_the_end_of_the_with_block(tmp_path):
    with Local(str(tmp_path), trace=True) as fs:
        with fs.open("foo.txt", "w") as f:
            f.write("bar")
    names = _recorded()
    assert {"pfio.v2.Local:open", "pfio.v2.Local:write",
            "pfio.v2.Local:exit-context"} <= set(names)


def test_local_records_reads_stats_and_listings(tmp_path):
    (tmp_path / "a.txt").write_text("bar")
    (tmp_path / "b.txt").write_text("baz")
    with Local(str(tmp_path), trace=True) as fs:
        with fs.open("a.txt") as f:
            assert f.read() == "bar"
        assert fs.exists("a.txt") and fs.stat("b.txt").size == 3
        assert sorted(fs.list()) == ["a.txt", "b.txt"]
    names = set(_recorded())
    assert {"pfio.v2.Local:read", "pfio.v2.Local:exists", "pfio.v2.Local:stat",
            "pfio.v2.Local:list-0", "pfio.v2.Local:list-1"} <= names


def test_without_trace_nothing_is_recorded_and_the_class_is_the_plain_one(tmp_path):
    with Local(str(tmp_path)) as fs:
        with fs.open("foo.txt", "w") as f:
            f.write("bar")
        assert type(fs) is Local
    assert _recorded() == []


def test_a_profiled_filesystem_is_still_its_class(tmp_path):
    fs = Local(str(tmp_path), trace=True)
    assert ppe_bridge.is_profiled(fs) and not ppe_bridge.is_profiled(Local(str(tmp_path)))
    assert isinstance(fs, Local) and type(fs).__name__ == "Local"
    assert repr(fs) == repr(Local(str(tmp_path)))
    assert isinstance(fs.subfs("d"), type(fs))  # a view records as well


def test_a_profiled_filesystem_stays_profiled_through_pickle(tmp_path):
    fs = pickle.loads(pickle.dumps(Local(str(tmp_path), trace=True)))
    assert fs.cwd == str(tmp_path)
    with fs.open("x", "wb") as f:
        f.write(b"x")
    assert "pfio.v2.Local:open" in _recorded()


def test_zip_from_url_records_the_archive_and_its_backing_file(tmp_path):
    path = str(tmp_path / "t.zip")
    ZipForTest(path)
    with from_url(path, trace=True) as fs:
        for name in fs.list(recursive=True):
            with fs.open(name) as f:
                f.read()
    names = set(_recorded())
    assert {"pfio.v2.Zip:create-zipfile-obj", "pfio.v2.Zip:list-0", "pfio.v2.Zip:list-1",
            "pfio.v2.Zip:open", "pfio.v2.Zip:read", "pfio.v2.Zip:close"} <= names
    assert {"pfio.v2.Local:open", "pfio.v2.Local:read", "pfio.v2.Local:close"} <= names


def test_zip_forced_by_type_records_too(tmp_path):
    path = str(tmp_path / "archive.bin")
    ZipForTest(path)
    with from_url(path, force_type="zip", trace=True) as fs:
        assert fs.exists("file")
    assert {"pfio.v2.Zip:create-zipfile-obj", "pfio.v2.Zip:exists"} <= set(_recorded())


def test_an_archive_shared_by_open_url_is_not_profiled(tmp_path):
    path = str(tmp_path / "t.zip")
    ZipForTest(path)
    with pfio.open_url(f"{path}/file", "rb") as f:
        assert f.read() == b"foo"
    assert _recorded() == []


@pytest.mark.parametrize("cache_class, prefix", [(FileCache, "pfio.cache.file"),
                                                 (MultiprocessFileCache,
                                                  "pfio.cache.multiprocessfile")])
def test_file_caches_record_put_and_get(tmp_path, cache_class, prefix):
    with cache_class(2, dir=str(tmp_path), do_pickle=True, trace=True) as cache:
        assert cache.put(0, b"foo") and cache.get(0) == b"foo"
    assert {f"{prefix}:put", f"{prefix}:get"} <= set(_recorded())


def test_a_profiled_cache_pickles_to_workers_profiled(tmp_path):
    cache = MultiprocessFileCache(2, dir=str(tmp_path), trace=True)
    cache.put(1, b"x")
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.get(1) == b"x" and type(copy) is type(cache)
    cache.close()


def test_http_cache_records_its_requests():
    with make_http_server() as (_, port):
        cache = HTTPCache(1, f"http://127.0.0.1:{port}/", do_pickle=True, trace=True)
        assert cache.put(0, b"foo") and cache.get(0) == b"foo"
    assert {"pfio.cache.http:put", "pfio.cache.http:get", "pfio.cache.http.conn:put",
            "pfio.cache.http.conn:put:request", "pfio.cache.http.conn:get",
            "pfio.cache.http.conn:get:request"} <= set(_recorded())


def test_pfio_trace_counts_a_profiled_filesystem_too(tmp_path):
    with pfio.trace.tracing():
        pfio.trace.reset()
        with Local(str(tmp_path), trace=True) as fs:
            with fs.open("f", "wb") as f:
                f.write(b"abc")
            assert fs.exists("f")
        counted = pfio.trace.metrics().operations
    assert counted[("file", "exists")].count == 1
    assert "pfio.v2.Local:exists" in _recorded()


def test_without_pytorch_pfn_extras_nothing_is_recorded_and_nothing_fails(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(ppe_bridge, "_ppe", False)
    with Local(str(tmp_path), trace=True) as fs:
        with fs.open("f", "w") as f:
            f.write("x")
        assert list(fs.list()) == ["f"]
    assert _recorded() == []


class _PositionalFile:
    """A file with positional reads, as pfio's S3 and HDFS readers have."""

    def read_at(self, offset: int, size: int) -> bytes:
        return b"x" * size

    def read_tail(self, size: int) -> tuple[int, bytes]:
        return 0, b"x" * size


def test_positional_reads_of_a_profiled_file_count_as_reads():
    f = ppe_bridge.ProfiledFile(_PositionalFile(), "pfio.v2.S3")
    assert f.read_at(0, 3) == b"xxx" and f.read_tail(2) == (0, b"xx")
    assert _recorded() == ["pfio.v2.S3:read", "pfio.v2.S3:read"]
