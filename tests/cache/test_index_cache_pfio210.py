"""Cache files move both ways between PFIO 2.10 (in its own virtualenv) and pfio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pfio.cache import FileCache, MultiprocessFileCache, ReadOnlyFileCache

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.harness import run_in_baseline  # noqa: E402


def _baseline(code: str) -> dict:
    try:
        return run_in_baseline("pfio210", code, timeout=120)
    except (OSError, RuntimeError) as exc:  # no virtualenv and no package index
        pytest.skip(f"PFIO 2.10 baseline unavailable: {exc}")


def expected(i: int) -> bytes:
    return bytes([i % 251]) * (i * 7 % 300)


@pytest.mark.parametrize("cls", ["FileCache", "MultiprocessFileCache"])
def test_pfio210_preserved_cache_loads_here(tmp_path, cls):
    _baseline(f"""
        import json
        from pfio.cache import {cls}
        c = {cls}(50, dir={str(tmp_path)!r})
        for i in range(0, 50, 2):
            c.put(i, bytes([i % 251]) * (i * 7 % 300))
        print(json.dumps({{"ok": c.preserve("from210")}}))
    """)
    with MultiprocessFileCache(50, dir=str(tmp_path)) as cache:
        assert cache.preload("from210")
        assert [cache.get(i) for i in range(50)] == \
            [expected(i) if i % 2 == 0 else None for i in range(50)]


def test_cache_preserved_here_loads_in_pfio210(tmp_path):
    with FileCache(50, dir=str(tmp_path)) as cache:
        for i in range(50):
            cache.put(i, expected(i))
        cache.preserve("fromhere")
    out = _baseline(f"""
        import json
        from pfio.cache import FileCache, MultiprocessFileCache, ReadOnlyFileCache
        got = []
        for cls in (FileCache, MultiprocessFileCache, ReadOnlyFileCache):
            c = cls(50, dir={str(tmp_path)!r})
            c.preload("fromhere")
            got.append([c.get(i).hex() for i in range(50)])
        print(json.dumps({{"got": got}}))
    """)
    want = [expected(i).hex() for i in range(50)]
    assert out["got"] == [want, want, want]


def test_pfio210_complete_cache_loads_in_readonly_cache(tmp_path):
    _baseline(f"""
        import json
        from pfio.cache import MultiprocessFileCache
        c = MultiprocessFileCache(20, dir={str(tmp_path)!r})
        for i in range(20):
            c.put(i, bytes([i % 251]) * (i * 7 % 300))
        print(json.dumps({{"ok": c.preserve("full")}}))
    """)
    cache = ReadOnlyFileCache(20, dir=str(tmp_path))
    assert cache.preload("full")
    assert [cache.get(i) for i in range(20)] == [expected(i) for i in range(20)]
