"""The object cache fills an entry from one GET (no HEAD), on a moto server over real HTTP:
the GET's size and ETag are the entry's version; hits send nothing within the ``ttl``; a
changed object is handled as the validation policy says; whole copies written without
``fsync`` are checked against their CRC-32 in a later boot; processes missing the same
object at once make one valid entry."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from pfio.cache import CachedFS, ObjectCache, object_cache
from pfio.cache.blocks import BlockFile
from pfio.cache.entry_files import BOOT_ID, write_meta, write_meta_xattr
from pfio.cache.object_cache import Source
from pfio.fs.s3 import S3

NAMES = [f"d/{i}.bin" for i in range(5)]


def body(name: str) -> bytes:
    return (name.encode() * 3000)[:7000 + len(name)]


def put(fs: S3, key: str, data: bytes) -> None:
    with fs.open(key, "wb") as f:
        f.write(data)


@pytest.fixture
def bucket(s3_env, s3_bucket):
    """A bucket holding ``NAMES``; yields its name."""
    fs = S3(s3_bucket)
    for name in NAMES:
        put(fs, name, body(name))
    fs.close()
    return s3_bucket


@pytest.fixture(autouse=True, params=["xattr", "meta file"])
def meta_storage(request, monkeypatch):
    """Each test on both kinds of metadata: extended attributes of the entry files, and
    ``.meta`` files, as on a filesystem without user extended attributes."""
    if request.param == "meta file":
        monkeypatch.setattr(object_cache, "xattrs_work", lambda directory: False)
    return request.param


def cache_in(tmp_path, **options) -> ObjectCache:
    """An object cache set as the patches' default one is (:func:`default_object_cache`):
    checked once an hour here, whole copies not synced."""
    return ObjectCache(str(tmp_path / "cache"), **{"validate": "ttl", "ttl": 3600,
                                                   "sync": False, **options})


def counted(log: list, bucket: str) -> dict[str, int]:
    """Requests of ``log`` to ``bucket``, by method."""
    counts: dict[str, int] = {}
    for method, path, _ in log:
        if path.startswith(f"/{bucket}/"):
            counts[method] = counts.get(method, 0) + 1
    return counts


def epoch(fs: CachedFS) -> dict[str, bytes]:
    out = {}
    for name in NAMES:
        with fs.open(name, "rb") as f:
            out[name] = f.read()
    return out


def expected() -> dict[str, bytes]:
    return {name: body(name) for name in NAMES}


def test_a_miss_sends_one_get_and_no_head(bucket, s3_requests, tmp_path):
    s3 = S3(bucket)
    log = s3_requests(s3)
    fs = CachedFS(s3, cache_in(tmp_path))
    assert epoch(fs) == expected()
    assert counted(log, bucket) == {"GET": len(NAMES)}
    assert all(rng is None for _, _, rng in log)  # plain GETs of whole objects


def test_a_hit_within_the_ttl_sends_nothing(bucket, s3_requests, tmp_path):
    s3 = S3(bucket)
    fs = CachedFS(s3, cache_in(tmp_path))
    epoch(fs)
    log = s3_requests(s3)
    assert epoch(fs) == expected()
    assert counted(log, bucket) == {}


def test_the_entry_records_the_etag_and_size_of_its_get(bucket, tmp_path):
    cache = cache_in(tmp_path)
    s3 = S3(bucket)
    epoch(CachedFS(s3, cache))
    meta = cache.entry_meta(Source(s3, NAMES[0]))
    st = s3.stat(NAMES[0])
    assert (meta["etag"], meta["size"], meta["bytes"]) == (st.etag, st.size, st.size)
    assert meta["boot"] == BOOT_ID and isinstance(meta["crc32"], int)


def test_a_miss_makes_the_entry_file_alone(bucket, tmp_path, meta_storage):
    """Creating files is what a miss costs most on some disks: with extended attributes the
    entry holds its metadata, and the download locks are bytes of one file per shard."""
    cache = cache_in(tmp_path)
    epoch(CachedFS(S3(bucket), cache))
    made = [name for _, _, names in os.walk(cache.dir) for name in names]
    kinds = sorted({name.rsplit(".", 1)[-1] for name in made if not name.startswith(".")})
    per_entry = {"xattr": ["obj"], "meta file": ["meta", "obj"]}[meta_storage]
    assert kinds == per_entry
    assert sum(name.endswith(".obj") for name in made) == len(NAMES)


def test_a_synced_cache_records_no_boot(bucket, tmp_path):
    """Entries of a cache made with ``sync=True`` (the default of ``ObjectCache``) are on
    disk when published: they are trusted in any boot."""
    cache = cache_in(tmp_path, sync=True)
    s3 = S3(bucket)
    epoch(CachedFS(s3, cache))
    assert "boot" not in cache.entry_meta(Source(s3, NAMES[0]))


def test_the_patches_default_cache_does_not_sync(monkeypatch, tmp_path):
    from pfio.cache import object_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(object_cache, "_default", None)
    cache = object_cache.default_object_cache()
    assert (cache.validate, cache.ttl, cache.sync) == ("ttl", 60.0, False)


def test_object_cache_path_sends_one_get_and_no_head(bucket, s3_requests, tmp_path):
    cache = cache_in(tmp_path)
    log = s3_requests(S3(bucket))
    with cache.path(f"s3://{bucket}/{NAMES[1]}") as local, open(local, "rb") as f:
        assert f.read() == body(NAMES[1])
    with cache.path(f"s3://{bucket}/{NAMES[1]}") as local:
        assert os.path.getsize(local) == len(body(NAMES[1]))
    assert counted(log, bucket) == {"GET": 1}


def test_an_object_changed_within_the_ttl_is_served_from_the_cache(bucket, s3_requests,
                                                                   tmp_path):
    s3 = S3(bucket)
    fs = CachedFS(s3, cache_in(tmp_path))
    epoch(fs)
    put(s3, NAMES[0], b"new version")
    log = s3_requests(s3)
    assert epoch(fs) == expected()  # the documented staleness: up to ttl seconds
    assert counted(log, bucket) == {}


def test_after_the_ttl_a_hit_sends_one_head_and_a_changed_object_one_get(
        bucket, s3_requests, tmp_path):
    s3 = S3(bucket)
    fs = CachedFS(s3, cache_in(tmp_path, ttl=0))
    epoch(fs)
    put(s3, NAMES[0], b"new version")
    log = s3_requests(s3)
    assert epoch(fs) == {**expected(), NAMES[0]: b"new version"}
    assert counted(log, bucket) == {"HEAD": len(NAMES), "GET": 1}


def test_validate_open_sends_one_head_per_hit(bucket, s3_requests, tmp_path):
    s3 = S3(bucket)
    fs = CachedFS(s3, cache_in(tmp_path, validate="open"))
    epoch(fs)
    log = s3_requests(s3)
    assert epoch(fs) == expected()
    assert counted(log, bucket) == {"HEAD": len(NAMES)}


def test_a_large_object_opens_once_and_its_first_block_comes_from_that_get(
        s3_env, s3_bucket, s3_requests, tmp_path):
    s3 = S3(s3_bucket)
    data = os.urandom(3 << 20)
    put(s3, "big.bin", data)
    log = s3_requests(s3)
    fs = CachedFS(s3, cache_in(tmp_path), whole_file_limit=1 << 20,
                  block_size=1 << 20)
    with fs.open("big.bin", "rb") as f:
        assert isinstance(f, BlockFile)
        assert f.read_at(1000, 5000) == data[1000:6000]
        assert counted(log, s3_bucket) == {"GET": 1}
        assert f.read() == data
    assert "HEAD" not in counted(log, s3_bucket)


def test_a_zip_through_the_cache_opens_with_its_tail(s3_env, s3_bucket, s3_requests,
                                                     tmp_path):
    import io
    import zipfile

    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("a.txt", b"member a")
    s3 = S3(s3_bucket)
    put(s3, "t.zip", raw.getvalue())
    log = s3_requests(s3)
    archive = CachedFS(s3, cache_in(tmp_path), whole_file_limit=10).open_zip("t.zip")
    assert archive.open("a.txt", "rb").read() == b"member a"
    assert [(m, r) for m, p, r in log if p.endswith("/t.zip")][0] == ("GET", "bytes=-1048576")
    assert "HEAD" not in counted(log, s3_bucket)


def test_a_missing_object_raises_and_leaves_no_entry(bucket, tmp_path):
    cache = cache_in(tmp_path)
    with pytest.raises(FileNotFoundError):
        CachedFS(S3(bucket), cache).open("d/missing.bin", "rb")
    assert cache.usage() == 0


# -- whole copies are not synced: checked once in a later boot ----------------------------

def entry_of(cache: ObjectCache, s3: S3, name: str) -> tuple[str, Source]:
    source = Source(s3, name)
    return cache.entry_path(source, ".obj"), source


def as_of_an_earlier_boot(cache: ObjectCache, source: Source) -> None:
    """Record the entry of ``source`` as written in another boot of the machine."""
    meta = {**cache.entry_meta(source), "boot": "an-earlier-boot"}
    if cache.meta_in_xattrs:
        fd = os.open(cache.entry_path(source, ".obj"), os.O_RDONLY)
        try:
            write_meta_xattr(fd, meta)
        finally:
            os.close(fd)
    else:
        write_meta(cache.entry_path(source, ".meta"), meta)


def test_an_entry_of_an_earlier_boot_with_its_bytes_is_served_and_marked(
        bucket, s3_requests, tmp_path):
    cache = cache_in(tmp_path)
    s3 = S3(bucket)
    epoch(CachedFS(s3, cache))
    _, source = entry_of(cache, s3, NAMES[0])
    as_of_an_earlier_boot(cache, source)
    log = s3_requests(s3)
    assert epoch(CachedFS(s3, cache)) == expected()
    assert counted(log, bucket) == {}
    assert cache.entry_meta(source)["boot"] == BOOT_ID  # checked once in this boot


def test_an_entry_of_an_earlier_boot_whose_bytes_were_lost_is_fetched_again(
        bucket, s3_requests, tmp_path):
    cache = cache_in(tmp_path)
    s3 = S3(bucket)
    epoch(CachedFS(s3, cache))
    obj, source = entry_of(cache, s3, NAMES[0])
    as_of_an_earlier_boot(cache, source)
    with open(obj, "r+b") as f:  # what a power cut may leave: the size, not the bytes
        f.write(b"\0" * 4096)
    log = s3_requests(s3)
    assert epoch(CachedFS(s3, cache)) == expected()
    assert counted(log, bucket) == {"GET": 1}


def test_an_entry_of_this_boot_is_not_read_to_be_checked(bucket, tmp_path):
    """In the boot that wrote it an entry is served as it is: a process that is killed
    loses nothing it wrote, and checking every hit would cost a read of the file."""
    cache = cache_in(tmp_path)
    s3 = S3(bucket)
    epoch(CachedFS(s3, cache))
    obj, _ = entry_of(cache, s3, NAMES[0])
    with open(obj, "r+b") as f:
        f.write(b"X")
    assert epoch(CachedFS(s3, cache))[NAMES[0]][:1] == b"X"


# -- processes missing the same objects at once -------------------------------------------

def _read_all(cache: ObjectCache, bucket: str, barrier, results) -> None:
    s3 = S3(bucket)
    log: list = []
    s3.connection.add_request_hook(lambda method, path, headers: log.append((method, path)))
    barrier.wait()
    contents = epoch(CachedFS(s3, cache))
    results.put((contents == expected(), sum(1 for m, p in log
                                             if p.startswith(f"/{bucket}/") and m == "GET")))


def test_concurrent_misses_from_two_processes_make_one_valid_entry_each(bucket, tmp_path):
    cache = cache_in(tmp_path, max_bytes=1 << 30)
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    children = [ctx.Process(target=_read_all, args=(cache, bucket, barrier, results))
                for _ in range(2)]
    for child in children:
        child.start()
    outcomes = [results.get(timeout=60) for _ in children]
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    assert all(same for same, _ in outcomes)
    assert sum(gets for _, gets in outcomes) == len(NAMES)  # one download per object
    s3 = S3(bucket)
    for name in NAMES:
        obj, source = entry_of(cache, s3, name)
        meta = cache.entry_meta(source)
        with open(obj, "rb") as f:
            assert f.read() == body(name)
        assert meta["bytes"] == len(body(name))
    parts = [n for _, _, names in os.walk(cache.dir) for n in names if n.endswith(".part")]
    assert parts == []
