"""The resolver: URL -> (filesystem, name); archives opened once per process, in a bounded
LRU, released on eviction, checked for changes as the backing filesystem says, reopened in
a child process."""

from __future__ import annotations

import io
import multiprocessing
import os
import zipfile

import pytest

import pfio
from pfio.containers.zip import Zip
from pfio.fs import resolver
from pfio.fs.memory import MemoryFS
from pfio.fs.s3 import S3


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


@pytest.fixture(autouse=True)
def _fresh_shared_archives():
    resolver.clear_shared_archives()
    yield
    resolver.clear_shared_archives()


@pytest.fixture
def store(request) -> tuple[str, MemoryFS]:
    """A mem:// directory of its own and its filesystem."""
    name = f"resolver-{request.node.name}"
    return f"mem://{name}", MemoryFS(name)


def _put(fs, path: str, data: bytes) -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


# -- URL -> (filesystem, name) ---------------------------------------------------------------

def test_a_plain_url_is_its_parent_directory_and_name(store):
    url, fs = store
    _put(fs, "d/a.txt", b"a")
    found, name = resolver.locate(f"{url}/d/a.txt")
    assert isinstance(found, MemoryFS) and name == "a.txt"
    assert found.open(name, "rb").read() == b"a"


def test_a_member_url_is_the_archive_and_the_member_path(store):
    url, fs = store
    _put(fs, "d/a.zip", _zip_bytes({"m/x.bin": b"x"}))
    found, name = resolver.locate(f"{url}/d/a.zip/m/x.bin")
    assert isinstance(found, Zip) and name == "m/x.bin"


def test_the_last_component_is_not_opened_as_an_archive(store):
    url, fs = store
    _put(fs, "a.zip", _zip_bytes({"x": b"x"}))
    found, name = resolver.locate(f"{url}/a.zip")
    assert isinstance(found, MemoryFS) and name == "a.zip"


def test_nested_archives_are_opened_in_turn(store):
    url, fs = store
    _put(fs, "o.zip", _zip_bytes({"in/i.zip": _zip_bytes({"f.txt": b"inner"})}))
    found, name = resolver.locate(f"{url}/o.zip/in/i.zip/f.txt")
    assert name == "f.txt" and found.open(name, "rb").read() == b"inner"
    assert resolver.shared_archive_count() == 2


def test_a_directory_named_like_an_archive_is_walked_into(store):
    url, fs = store
    _put(fs, "d.zip/f.txt", b"plain")
    found, name = resolver.locate(f"{url}/d.zip/f.txt")
    assert found.open(name, "rb").read() == b"plain"


def test_a_root_url_is_the_filesystem_and_no_name(store):
    url, _ = store
    found, name = resolver.locate(f"{url}/")
    assert isinstance(found, MemoryFS) and name == ""


def test_the_private_mode_hands_over_archives_that_close_their_backing_filesystem(store):
    url, fs = store
    _put(fs, "a.zip", _zip_bytes({"x": b"x"}))
    found, name = resolver.locate(f"{url}/a.zip/x", shared=False)
    assert resolver.shared_archive_count() == 0
    assert found.owns_backing_fs
    found.close()
    assert found.closed


# -- archives shared per process -------------------------------------------------------------

def test_open_url_of_members_opens_the_archive_once(store, monkeypatch):
    url, fs = store
    _put(fs, "a.zip", _zip_bytes({f"m{i}": bytes([i]) * 10 for i in range(5)}))
    built = []
    original = Zip._build_index
    monkeypatch.setattr(Zip, "_build_index", lambda self: built.append(1) or original(self))
    for i in range(5):
        with pfio.open_url(f"{url}/a.zip/m{i}", "rb") as f:
            assert f.read() == bytes([i]) * 10
    assert len(built) == 1


def test_the_lru_is_bounded_and_releases_what_it_evicts(store, monkeypatch):
    url, fs = store
    monkeypatch.setattr(resolver, "MAX_SHARED_ARCHIVES", 2)
    for i in range(3):
        _put(fs, f"a{i}.zip", _zip_bytes({"x": b"%d" % i}))
    first, _ = resolver.locate(f"{url}/a0.zip/x")
    for i in range(3):
        assert pfio.open_url(f"{url}/a{i}.zip/x", "rb").read() == b"%d" % i
    assert resolver.shared_archive_count() == 2
    assert first._io.file is None  # evicted: backing file released
    assert first.open("x", "rb").read() == b"0"  # a holder of the evicted archive still reads


def test_an_evicted_archive_keeps_its_file_while_a_member_is_open(store, monkeypatch):
    url, fs = store
    monkeypatch.setattr(resolver, "MAX_SHARED_ARCHIVES", 1)
    _put(fs, "big.zip", _zip_bytes({"big": b"b" * 5000}))
    _put(fs, "other.zip", _zip_bytes({"x": b"x"}))
    archive, _ = resolver.locate(f"{url}/big.zip/big")
    archive.whole_member_limit = 100  # the member is streamed: it holds the backing file
    member = pfio.open_url(f"{url}/big.zip/big", "rb")
    pfio.open_url(f"{url}/other.zip/x", "rb").close()  # evicts big.zip
    assert archive._io.file is not None
    assert member.read() == b"b" * 5000
    member.close()
    assert archive._io.file is None


def test_a_changed_archive_is_opened_again(store):
    url, fs = store
    _put(fs, "a.zip", _zip_bytes({"x": b"old"}))
    assert pfio.open_url(f"{url}/a.zip/x", "rb").read() == b"old"
    _put(fs, "a.zip", _zip_bytes({"x": b"new", "pad": b"p"}))  # mem:// checks every use
    assert pfio.open_url(f"{url}/a.zip/x", "rb").read() == b"new"


def test_archives_inside_a_changed_archive_are_opened_again(store):
    url, fs = store
    _put(fs, "o.zip", _zip_bytes({"i.zip": _zip_bytes({"x": b"old"})}))
    assert pfio.open_url(f"{url}/o.zip/i.zip/x", "rb").read() == b"old"
    _put(fs, "o.zip", _zip_bytes({"i.zip": _zip_bytes({"x": b"new"}), "pad": b"p"}))
    assert pfio.open_url(f"{url}/o.zip/i.zip/x", "rb").read() == b"new"


@pytest.mark.parametrize("policy", [("never", 0.0), ("ttl", 3600.0)])
def test_the_filesystems_policy_decides_when_a_change_is_seen(store, monkeypatch, policy):
    url, fs = store
    monkeypatch.setattr(MemoryFS, "validation", policy)
    _put(fs, "a.zip", _zip_bytes({"x": b"old"}))
    assert pfio.open_url(f"{url}/a.zip/x", "rb").read() == b"old"
    _put(fs, "a.zip", _zip_bytes({"x": b"new", "pad": b"p"}))
    assert pfio.open_url(f"{url}/a.zip/x", "rb").read() == b"old"
    resolver.clear_shared_archives()
    assert pfio.open_url(f"{url}/a.zip/x", "rb").read() == b"new"


def _child_reads(url: str, queue) -> None:
    queue.put((resolver.shared_archive_count(), pfio.open_url(url, "rb").read(),
               resolver.shared_archive_count()))


def test_a_forked_child_opens_archives_of_its_own(tmp_path):
    zip_path = tmp_path / "a.zip"
    zip_path.write_bytes(_zip_bytes({"x": b"data"}))
    url = f"{tmp_path}/a.zip/x"
    assert pfio.open_url(url, "rb").read() == b"data"
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_reads, args=(url, queue))
    child.start()
    result = queue.get(timeout=60)
    child.join(60)
    assert result == (0, b"data", 1)
    assert resolver.shared_archive_count() == 1


def test_patched_os_path_answers_from_the_shared_archive(store):
    url, fs = store
    _put(fs, "a.zip", _zip_bytes({"d/x": b"12345"}))
    with pfio.patched("os.path"):
        assert os.path.getsize(f"{url}/a.zip/d/x") == 5
        assert os.path.isdir(f"{url}/a.zip/d")
        assert os.path.isfile(f"{url}/a.zip")
        assert not os.path.exists(f"{url}/a.zip/nope")
    assert resolver.shared_archive_count() == 1


# -- on S3: request counts -------------------------------------------------------------------

MEMBER = 64 << 10


@pytest.fixture
def s3_zip(s3_env, s3_bucket) -> tuple[str, dict[str, bytes]]:
    members = {f"m/{i:05d}.bin": os.urandom(MEMBER) for i in range(40)}
    with S3(s3_bucket).open("train.zip", "wb") as f:
        f.write(_zip_bytes(members))
    return f"s3://{s3_bucket}/train.zip", members


def _ranged_bytes(header: str | None) -> int:
    start, stop = map(int, header[len("bytes="):].split("-"))
    return stop - start + 1


def test_open_url_of_a_member_on_s3_costs_one_bounded_get(s3_zip, s3_requests):
    url, members = s3_zip
    bucket = url.split("/")[2]
    log = s3_requests(S3(bucket))  # the client is shared by every S3 of these settings
    with pfio.open_url(f"{url}/m/00000.bin", "rb") as f:  # opens the zip
        assert f.read() == members["m/00000.bin"]
    for name in ("m/00001.bin", "m/00007.bin", "m/00013.bin"):
        del log[:]
        with pfio.open_url(f"{url}/{name}", "rb") as f:
            assert f.read() == members[name]
        assert [method for method, _, _ in log] == ["GET"]
        assert _ranged_bytes(log[0][2]) <= MEMBER + (64 << 10)


def test_patched_open_of_a_member_on_s3_reuses_the_archive(s3_zip, s3_requests):
    url, members = s3_zip
    log = s3_requests(S3(url.split("/")[2]))
    with pfio.patched("builtins"):
        with open(f"{url}/m/00002.bin", "rb") as f:
            assert f.read() == members["m/00002.bin"]
        del log[:]
        with open(f"{url}/m/00003.bin", "rb") as f:
            assert f.read() == members["m/00003.bin"]
    assert len(log) == 1 and log[0][0] == "GET"


def test_a_release_waits_for_a_read_in_progress(store, monkeypatch):
    import threading

    from pfio.fs.positional import PositionalReader

    url, fs = store
    _put(fs, "a.zip", _zip_bytes({"x": b"x" * 100}))
    archive, name = resolver.locate(f"{url}/a.zip/x")
    started, go_on = threading.Event(), threading.Event()
    original = PositionalReader.read_at

    def slow_read_at(self, offset, size):
        started.set()
        go_on.wait(30)
        return original(self, offset, size)

    monkeypatch.setattr(PositionalReader, "read_at", slow_read_at)
    result = []
    reader = threading.Thread(target=lambda: result.append(archive.open(name, "rb").read()))
    reader.start()
    assert started.wait(30)
    archive.release()  # as an eviction does, from another thread
    assert archive._io.file is not None
    go_on.set()
    reader.join(30)
    assert result == [b"x" * 100]
    assert archive._io.file is None
