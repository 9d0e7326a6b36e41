"""The index caches as PFIO 2.10 code builds them: its keywords (``trace=True``), its
module paths, a full disk (``RuntimeWarning``, the data goes uncached, the program goes on)
and ``NaiveCache``'s index checks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import pfio
import pfio.trace
from pfio.cache.mmap_file_cache import ReadOnlyFileCache


@pytest.mark.parametrize("name", ["FileCache", "MultiprocessFileCache"])
def test_trace_keyword_is_accepted_and_the_cache_reports_to_the_tracer(tmp_path, name):
    cache = getattr(pfio.cache, name)(4, dir=str(tmp_path), verbose=True, trace=True)
    assert cache.trace is True
    pfio.trace.reset()
    pfio.trace.enable()
    try:
        cache.put(0, b"abc")
        assert cache.get(0) == b"abc" and cache.get(1) is None
        stats = pfio.trace.metrics().caches
    finally:
        pfio.trace.disable()
        cache.close()
    [entry] = stats.values()
    assert (entry.hits, entry.misses, entry.hit_bytes) == (1, 1, 3)


def test_readonly_file_cache_at_pfio2_module_path(tmp_path):
    with pfio.cache.FileCache(2, dir=str(tmp_path)) as cache:
        cache.put(0, b"a")
        cache.put(1, b"b")
        cache.preserve("kept")
    reader = ReadOnlyFileCache(2, dir=str(tmp_path))
    reader.preload("kept")
    assert (reader.get(0), reader.get(1)) == (b"a", b"b")
    assert ReadOnlyFileCache is pfio.cache.ReadOnlyFileCache


_FULL_DISK = textwrap.dedent("""
    import sys, warnings
    import pfio
    cache = getattr(pfio.cache, sys.argv[1])(4, dir=sys.argv[2], trace=True)
    assert cache.put(0, b"small")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        full = cache.put(1, b"x" * (256 * 1024))
    print(full, [(w.category.__name__, "No space left" in str(w.message)) for w in caught])
    print(cache.get(0), cache.get(1), cache.put(2, b"fits"), cache.get(2))
""")


@pytest.mark.parametrize("name", ["FileCache", "MultiprocessFileCache"])
def test_full_disk_warns_and_goes_on_uncached(tmp_path, name):
    """A real ENOSPC without root: a 128 KiB tmpfs in a private user and mount namespace
    (``unshare -rm``), gone with the process."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1)")
    mount = tmp_path / "tiny"
    mount.mkdir()
    script = (f"mount -t tmpfs -o size=128k tmpfs {mount} || exit 97; "
              f'exec "$0" -c "$1" {name} {mount}')
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, sys.executable, _FULL_DISK],
                          capture_output=True, text=True)
    if done.returncode == 97 or "unshare failed" in done.stderr:
        pytest.skip(f"no private tmpfs here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "False [('RuntimeWarning', True)]",
        "b'small' None True b'fits'",
    ]


def test_naive_cache_indexes_as_a_list_as_in_pfio2():
    cache = pfio.cache.NaiveCache(3)
    assert cache.put(-1, b"last")
    assert cache.get(2) == b"last" and cache.get(-1) == b"last"
    assert cache.put(2, b"again") is False
    for i in (-4, 3):
        with pytest.raises(IndexError, match="out of range"):
            cache.get(i)
        with pytest.raises(IndexError, match="out of range"):
            cache.put(i, b"x")


def test_naive_cache_needs_a_positive_length():
    # PFIO 2.10 asserted it (AssertionError, gone under python -O); pfio raises ValueError
    with pytest.raises(ValueError, match="length"):
        pfio.cache.NaiveCache(0)


@pytest.mark.parametrize("name", ["FileCache", "MultiprocessFileCache"])
def test_full_disk_anywhere_in_put_warns(tmp_path, monkeypatch, name):
    """As PFIO 2.x, an ENOSPC from any call of ``put`` (here the read of the slot's index
    entry, injected: a real read does not fail so) is a warning and a False."""

    def full(*args):
        raise OSError(28, "No space left on device")

    with getattr(pfio.cache, name)(4, dir=str(tmp_path)) as cache:
        with monkeypatch.context() as patched:
            patched.setattr(os, "pread", full)
            with pytest.warns(RuntimeWarning, match="No space left"):
                assert cache.put(0, b"data") is False
        assert cache.put(0, b"data") and cache.get(0) == b"data"


def test_other_errors_in_put_still_raise(tmp_path, monkeypatch):

    def broken(*args):
        raise OSError(5, "Input/output error")

    with pfio.cache.FileCache(4, dir=str(tmp_path)) as cache:
        with monkeypatch.context() as patched:
            patched.setattr(os, "pread", broken)
            with pytest.raises(OSError, match="Input/output"):
                cache.put(0, b"data")
