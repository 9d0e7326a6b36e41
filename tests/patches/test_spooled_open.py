"""``open(url)`` for writing: a local file published on close (a file descriptor for
``os.fsync``, seeking and reading back in the update modes), all or nothing, streamed once
large unless its descriptor was given out; appending refused with the workaround named."""

import gc
import io
import os

import pytest

from pfio.patches import patch_all, spool


@pytest.fixture
def url(remote):
    patch_all("builtins")
    return remote[0]


def _read(fs, name):
    with fs.open(name, "rb") as f:
        return f.read()


def test_fsync_of_the_file_descriptor_then_publish_on_close(url, remote):
    f = open(f"{url}/events", "wb")
    f.write(b"event")
    f.flush()
    os.fsync(f.fileno())
    assert not remote[1].exists("events")  # published on close, not before
    f.close()
    assert _read(remote[1], "events") == b"event"


def test_text_mode_has_a_file_descriptor_too(url, remote):
    with open(f"{url}/t.txt", "w") as f:
        f.write("line\n")
        f.flush()
        os.fsync(f.fileno())
    assert _read(remote[1], "t.txt") == b"line\n"


def test_w_plus_reads_back_and_seeks(url, remote):
    with open(f"{url}/w.bin", "w+b") as f:
        f.write(b"hello world")
        f.seek(0)
        assert f.read(5) == b"hello"
        f.seek(6)
        f.write(b"there")
        f.truncate(11)
    assert _read(remote[1], "w.bin") == b"hello there"


def test_r_plus_updates_a_copy_of_the_object(url, remote):
    with remote[1].open("r.bin", "wb") as f:
        f.write(b"abcdef")
    with open(f"{url}/r.bin", "r+b") as f:
        assert f.read(3) == b"abc"
        f.write(b"XYZ")
    assert _read(remote[1], "r.bin") == b"abcXYZ"


def test_r_plus_of_a_missing_object_raises(url):
    with pytest.raises(FileNotFoundError):
        open(f"{url}/missing", "r+b")


def test_x_of_an_existing_object_raises(url, remote):
    with remote[1].open("x.bin", "wb") as f:
        f.write(b"x")
    with pytest.raises(FileExistsError):
        open(f"{url}/x.bin", "xb")
    with open(f"{url}/new.bin", "x") as f:
        f.write("n")
    assert _read(remote[1], "new.bin") == b"n"


@pytest.mark.parametrize("mode", ["wb", "w", "w+b"])
def test_an_exception_in_the_block_publishes_nothing(url, remote, mode):
    with pytest.raises(RuntimeError):
        with open(f"{url}/bad", mode) as f:
            f.write(b"partial" if "b" in mode else "partial")
            raise RuntimeError("stop")
    assert not remote[1].exists("bad")


def test_write_only_files_seek_while_local(url, remote):
    with open(f"{url}/w.bin", "wb") as f:
        f.write(b"xbc")
        f.seek(0)
        f.write(b"a")
    assert _read(remote[1], "w.bin") == b"abc"


def test_a_large_file_streams_and_then_has_no_descriptor(url, remote, monkeypatch):
    monkeypatch.setattr(spool, "SPOOL_LIMIT", 8)
    with open(f"{url}/big.bin", "wb", buffering=0) as f:
        f.write(b"0123456789")
        assert f._streaming
        f.write(b"ab")
        with pytest.raises(io.UnsupportedOperation, match="fileno"):
            f.fileno()
        with pytest.raises(io.UnsupportedOperation, match="seek"):
            f.seek(0)
    assert _read(remote[1], "big.bin") == b"0123456789ab"


def test_a_file_whose_descriptor_was_given_out_stays_local(url, remote, monkeypatch):
    monkeypatch.setattr(spool, "SPOOL_LIMIT", 8)
    with open(f"{url}/big.bin", "wb", buffering=0) as f:
        fd = f.fileno()
        f.write(b"0123456789")
        os.fsync(fd)
        assert not f._streaming
    assert _read(remote[1], "big.bin") == b"0123456789"


def test_append_names_the_workaround_where_objects_cannot_grow(s3_env, s3_bucket):
    patch_all("builtins")
    with pytest.raises(io.UnsupportedOperation, match="'r\\+' and seek to its end"):
        open(f"s3://{s3_bucket}/log.txt", "a")


@pytest.mark.parametrize("mode", ["wb", "w"])
def test_a_file_dropped_unclosed_publishes_nothing(url, remote, mode):
    f = open(f"{url}/dropped", mode)
    f.write(b"x" if "b" in mode else "x")
    with pytest.warns(ResourceWarning, match="not closed"):
        del f
        gc.collect()
    assert not remote[1].exists("dropped")
