"""The object cache on a shared, unlucky machine: eviction racing downloads in other
processes, directories other users could tamper with, writes through ``CachedFS`` under
``validate="never"``, leftovers of killed processes, and entries synced to disk."""

from __future__ import annotations

import multiprocessing
import os
import stat

import pytest

from pfio.cache import CachedFS, ObjectCache, eviction
from pfio.cache.key_locks import key_lock, lock_path
from pfio.cache.object_cache import Source
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS


@pytest.fixture
def src(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    return root


def cache_in(tmp_path, **kwargs) -> ObjectCache:
    return ObjectCache(str(tmp_path / "cache"), **kwargs)


def files_ending(cache: ObjectCache, suffix: str) -> list[str]:
    return sorted(os.path.join(root, name) for root, _, names in os.walk(cache.dir)
                  for name in names if name.endswith(suffix))


# -- eviction against downloads ---------------------------------------------------------

def test_scan_leaves_a_partial_download_whose_key_is_being_downloaded(tmp_path, src):
    """A downloader creates its ``.part`` file under the key's download lock; a scan between
    that moment and the rename must not delete it (it did: "FileNotFoundError ... .part")."""
    (src / "a").write_bytes(b"a" * 1000)
    cache = cache_in(tmp_path, max_bytes=0)
    source = Source(Local(str(src)), "a")
    prefix = cache.entry_path(source, "")
    with key_lock(prefix):  # as ObjectCache.acquire holds it while publishing
        part = f"{prefix}.{os.getpid()}.0123abcd.part"
        open(part, "wb").close()  # created, not yet locked by anything
        cache.evict(0)
        assert os.path.exists(part)
    cache.evict(0)  # nobody downloads that key any more: the file is a leftover
    assert not os.path.exists(part)


def _read_in_a_loop(cache: ObjectCache, root: str, names: list[str], rounds: int, queue) -> None:
    fs = Local(root)
    failures = 0
    for i in range(rounds):
        name = names[(i + os.getpid()) % len(names)]
        try:
            with cache.open_source(Source(fs, name)) as f:
                failures += f.read() != name.encode() * 2000
        except OSError:
            failures += 1
    queue.put(failures)


def test_readers_and_evictions_in_four_processes_never_fail(tmp_path, src):
    names = [f"f{i}" for i in range(8)]
    for name in names:
        (src / name).write_bytes(name.encode() * 2000)
    cache = cache_in(tmp_path, max_bytes=8000)  # every download evicts the others
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    readers = [ctx.Process(target=_read_in_a_loop, args=(cache, str(src), names, 300, queue))
               for _ in range(4)]
    for r in readers:
        r.start()
    failures = [queue.get(timeout=120) for _ in readers]
    for r in readers:
        r.join(30)
    assert failures == [0, 0, 0, 0]
    assert files_ending(cache, ".part") == []


# -- a directory nobody else can write to -------------------------------------------------

def test_missing_parents_are_made_private(tmp_path):
    ObjectCache(str(tmp_path / "a" / "b" / "cache"))
    for directory in ("a", "a/b", "a/b/cache"):
        assert stat.S_IMODE(os.stat(tmp_path / directory).st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o1777], ids=oct)
def test_a_directory_others_may_write_is_refused(tmp_path, mode):
    (tmp_path / "shared").mkdir()
    os.chmod(tmp_path / "shared", mode)
    with pytest.raises(PermissionError, match="writable by other users") as error:
        ObjectCache(str(tmp_path / "shared"))
    assert error.value.filename == str(tmp_path / "shared")


def test_a_readable_directory_of_ones_own_is_accepted(tmp_path):
    (tmp_path / "mine").mkdir()
    os.chmod(tmp_path / "mine", 0o755)
    assert ObjectCache(str(tmp_path / "mine")).dir == str(tmp_path / "mine")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory away needs root")
def test_a_directory_of_another_user_is_refused(tmp_path):
    (tmp_path / "theirs").mkdir(mode=0o700)
    os.chown(tmp_path / "theirs", 65534, 65534)
    with pytest.raises(PermissionError, match="belongs to another user"):
        ObjectCache(str(tmp_path / "theirs"))


def test_a_file_as_directory_is_refused(tmp_path):
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        ObjectCache(str(tmp_path / "file"))


def test_a_planted_lock_link_creates_nothing_elsewhere(tmp_path, src):
    (src / "a").write_bytes(b"real")
    cache = cache_in(tmp_path)
    source = Source(Local(str(src)), "a")
    planted = lock_path(cache.entry_path(source, ""))
    os.symlink(tmp_path / "created-elsewhere", planted)
    with pytest.raises(OSError) as error:
        cache.get_path(str(src / "a"))
    assert error.value.filename == planted
    assert not os.path.lexists(tmp_path / "created-elsewhere")


def test_a_planted_entry_link_is_not_served(tmp_path, src):
    (src / "a").write_bytes(b"real")
    (tmp_path / "fake").write_bytes(b"fake")
    cache = cache_in(tmp_path, validate="never")
    cache.get_path(str(src / "a"))
    entry = cache.entry_path(Source(Local(str(src)), "a"), ".obj")
    os.unlink(entry)
    os.symlink(tmp_path / "fake", entry)
    with pytest.raises(OSError) as error:
        cache.get_path(str(src / "a"))
    assert error.value.filename == entry


# -- writes through CachedFS --------------------------------------------------------------

@pytest.mark.parametrize("mode, data", [("wb", b"new"), ("w", "new")])
def test_write_under_never_invalidates_when_published(tmp_path, request, mode, data):
    store = MemoryFS(name=f"hard-{request.node.name}")
    with store.open("f", "wb") as f:
        f.write(b"old")
    fs = CachedFS(store, cache_in(tmp_path, validate="never"))
    with fs.open("f", mode) as f:
        f.write(data)
        with fs.open("f", "rb") as reader:  # another reader caches the old bytes meanwhile
            assert reader.read() == b"old"
    with fs.open("f", "rb") as f:
        assert f.read() == b"new"


def test_aborted_write_keeps_the_cached_copy(tmp_path, request):
    store = MemoryFS(name=f"hard-{request.node.name}")
    with store.open("f", "wb") as f:
        f.write(b"old")
    fs = CachedFS(store, cache_in(tmp_path, validate="never"))
    with pytest.raises(RuntimeError), fs.open("f", "wb") as f:
        f.write(b"partial")
        assert fs.open("f", "rb").read() == b"old"
        raise RuntimeError
    assert fs.open("f", "rb").read() == b"old"


# -- leftovers of killed processes ----------------------------------------------------------

def make_leftovers(cache: ObjectCache, age: float) -> list[str]:
    shard = os.path.join(cache.dir, "ab")
    os.makedirs(shard, exist_ok=True)
    key = "ab" + "0" * 62
    paths = [os.path.join(shard, name) for name in (
        f"{key}.meta.123.0a0b0c0d.tmp", f"{key}.123.0a0b0c0d.part", f".{key}.obj.0a0b.pfio-tmp")]
    for path in paths:
        with open(path, "wb") as f:
            f.write(b"left by a killed process")
        os.utime(path, (os.path.getmtime(path) - age,) * 2)
    return paths


@pytest.mark.parametrize("max_bytes", [None, 1 << 30])
def test_old_leftovers_are_swept_with_or_without_a_limit(tmp_path, src, max_bytes):
    (src / "a").write_bytes(b"a" * 100)
    cache = cache_in(tmp_path, max_bytes=max_bytes)
    leftovers = make_leftovers(cache, eviction.STALE_AFTER + 60)
    cache.get_path(str(src / "a"))  # a download sweeps
    assert [p for p in leftovers if os.path.exists(p)] == []


def test_recent_temporary_files_are_kept(tmp_path, src):
    (src / "a").write_bytes(b"a" * 100)
    cache = cache_in(tmp_path)
    meta_tmp, part, local_tmp = make_leftovers(cache, 0)
    cache.get_path(str(src / "a"))
    assert os.path.exists(meta_tmp) and os.path.exists(local_tmp)  # may be being written
    assert not os.path.exists(part)  # no download of its key is going on


# -- durability: spying on os.fsync (a power cut cannot be tested honestly) --------------

def test_a_published_entry_and_its_directory_are_synced(tmp_path, src, monkeypatch):
    (src / "a").write_bytes(b"a" * 100)
    cache = cache_in(tmp_path)
    synced = []
    real = os.fsync

    def spy(fd):
        st = os.fstat(fd)
        synced.append((stat.S_ISDIR(st.st_mode), st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    with cache.path(str(src / "a")) as local:
        entry = os.stat(local).st_ino
        shard = os.stat(os.path.dirname(local)).st_ino
    assert (False, entry) in synced
    assert synced[-1] == (True, shard)


def test_a_block_is_synced_before_it_is_marked_present(tmp_path, request, monkeypatch):
    store = MemoryFS(name=f"hard-{request.node.name}")
    with store.open("big", "wb") as f:
        f.write(b"b" * 10_000)
    fs = CachedFS(store, cache_in(tmp_path), whole_file_limit=100, block_size=4096)
    events = []
    real_sync, real_pwrite = os.fdatasync, os.pwrite
    monkeypatch.setattr(os, "fdatasync", lambda fd: (events.append("sync"), real_sync(fd)))
    monkeypatch.setattr(os, "pwrite", lambda fd, data, at: (
        events.append(bytes(data[:1])), real_pwrite(fd, data, at))[1])
    with fs.open("big", "rb") as f:
        assert f.read(10) == b"b" * 10
    assert events[-3:] == [b"b", "sync", b"\x01"]
