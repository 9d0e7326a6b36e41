"""Cache look-ups are reported to the tracer hook."""

from __future__ import annotations

import pytest

from pfio.cache import CachedFS, MultiprocessFileCache, ObjectCache
from pfio.fs.memory import MemoryFS
from pfio.trace import hook


@pytest.fixture
def records(monkeypatch):
    seen = []
    monkeypatch.setattr(hook, "ENABLED", True)
    monkeypatch.setattr(hook, "record_cache",
                        lambda name, hit, nbytes, seconds, key=None: seen.append(
                            (name, hit, nbytes)))
    return seen


def test_index_cache_reports_hits_and_misses(tmp_path, records):
    with MultiprocessFileCache(2, dir=str(tmp_path)) as cache:
        cache.get(0)
        cache.put(0, b"abc")
        cache.get(0)
    assert records == [("multiprocess_file", False, 0), ("multiprocess_file", True, 3)]


def test_object_and_block_caches_report(tmp_path, records):
    store = MemoryFS("trace-store")
    with store.open("small", "wb") as f:
        f.write(b"12345")
    with store.open("big", "wb") as f:
        f.write(b"x" * 5000)
    fs = CachedFS(store, ObjectCache(str(tmp_path)), whole_file_limit=100, block_size=1024)
    fs.open("small", "rb").close()
    fs.open("small", "rb").close()
    with fs.open("big", "rb") as f:
        f.read_at(0, 10)
        f.read_at(0, 10)
    assert records == [("object", False, 5), ("object", True, 5),
                       ("block", False, 10), ("block", True, 10)]
