"""Zip archives in write mode: created on any writable filesystem, published on close."""

import gc
import io
import os
import pickle
import zipfile

import pytest

from pfio.containers.zip import Zip
from pfio.errors import ArchiveError
from pfio.fs.memory import MemoryFS


def test_write_round_trip(local, tmp_path):
    with local.open_zip("w.zip", "w") as z:
        z.makedirs("d/e")
        with z.open("d/e/t.txt", "w", encoding="utf-8") as f:
            f.write("héllo\n")
        with z.open("raw.bin", "wb", size=4, compression_type="stored") as f:
            f.write(b"\x00\x01\x02\x03")
    with zipfile.ZipFile(tmp_path / "w.zip") as zf:
        assert zf.testzip() is None
        assert zf.getinfo("raw.bin").compress_type == zipfile.ZIP_STORED
        assert zf.getinfo("d/e/").is_dir()
    with local.open_zip("w.zip") as z:
        assert z.open("d/e/t.txt", "r", encoding="utf-8").read() == "héllo\n"
        assert z.open("raw.bin", "rb").read() == b"\x00\x01\x02\x03"


def test_write_large_member_streams_through(local):
    chunk = os.urandom(1 << 16)
    with local.open_zip("w.zip", "w") as z, z.open("big", "wb") as f:
        for _ in range(64):
            f.write(chunk)
    with Zip(local, "w.zip", whole_member_limit=1 << 20) as z:
        assert z.stat("big").size == 64 << 16
        assert z.open("big", "rb").read() == chunk * 64


def _local_extra_length(path, name):
    with zipfile.ZipFile(path) as zf:
        offset = zf.getinfo(name).header_offset
    with open(path, "rb") as f:
        f.seek(offset + 28)
        return int.from_bytes(f.read(2), "little")


def test_zip64_only_for_members_of_unknown_size(local, tmp_path):
    with local.open_zip("w.zip", "w") as z:
        with z.open("unknown", "wb") as f:
            f.write(b"x")
        with z.open("known", "wb", size=1) as f:
            f.write(b"y")
    assert _local_extra_length(tmp_path / "w.zip", "unknown") == 20  # zip64 sizes
    assert _local_extra_length(tmp_path / "w.zip", "known") == 0


def test_written_members_are_listed_while_writing(local):
    with local.open_zip("w.zip", "w") as z:
        with z.open("a/b.txt", "wb") as f:
            f.write(b"x")
        assert z.exists("a/b.txt") and z.isdir("a") and list(z.list("a")) == ["b.txt"]
        assert z.stat("a/b.txt").size == 1


def test_archive_is_published_on_close_only(local, tmp_path):
    z = local.open_zip("w.zip", "w")
    with z.open("m", "wb") as f:
        f.write(b"x")
    assert not (tmp_path / "w.zip").exists()
    z.close()
    assert (tmp_path / "w.zip").exists()


def test_exception_inside_with_publishes_nothing(local, tmp_path):
    with pytest.raises(RuntimeError), local.open_zip("w.zip", "w") as z:
        with z.open("m", "wb") as f:
            f.write(b"x")
        raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []


def test_failed_member_writer_keeps_archive_unpublished(local, tmp_path):
    z = local.open_zip("w.zip", "w")
    with pytest.raises(RuntimeError), z.open("m", "wb") as f:
        f.write(b"x")
        raise RuntimeError("boom")
    with pytest.raises(ArchiveError, match="writing member 'm' failed"):
        z.close()
    assert os.listdir(tmp_path) == []


def test_close_with_open_member_publishes_nothing(local, tmp_path):
    z = local.open_zip("w.zip", "w")
    member = z.open("m", "wb")
    member.write(b"x")
    with pytest.raises(ValueError, match="while member 'm' was open"):
        z.close()
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="archive was closed"):
        member.close()
    assert os.listdir(tmp_path) == []


def test_archive_never_closed_is_not_published(local, tmp_path):
    z = local.open_zip("w.zip", "w")
    with z.open("m", "wb") as f:
        f.write(b"x")
    del z
    gc.collect()
    assert os.listdir(tmp_path) == []


def test_one_member_at_a_time(local):
    with local.open_zip("w.zip", "w") as z, z.open("a", "wb"):
        with pytest.raises(ValueError, match="one member at a time"):
            z.open("b", "wb")


def test_existing_member_cannot_be_replaced(local):
    with local.open_zip("w.zip", "w") as z:
        z.open("a", "wb").close()
        with pytest.raises(FileExistsError):
            z.open("a", "wb")
        with pytest.raises(FileExistsError):
            z.mkdir("a")


def test_member_under_a_file_is_not_a_directory(local):
    with local.open_zip("w.zip", "w") as z:
        z.open("a", "wb").close()
        with pytest.raises(NotADirectoryError):
            z.open("a/b", "wb")


def test_mkdir_needs_the_parent(local):
    with local.open_zip("w.zip", "w") as z, pytest.raises(FileNotFoundError):
        z.mkdir("x/y")


def test_reading_while_writing_is_unsupported(local):
    with local.open_zip("w.zip", "w") as z:
        z.open("a", "wb").close()
        with pytest.raises(io.UnsupportedOperation):
            z.open("a", "rb")


def test_archive_open_for_writing_is_not_picklable(local):
    with local.open_zip("w.zip", "w") as z, pytest.raises(TypeError):
        pickle.dumps(z)


def test_create_needs_write_mode(make_zip, local):
    make_zip({"m": b"x"})
    with pytest.raises(ValueError, match="mode='w'"):
        Zip(local, "a.zip", create=True)


def test_write_on_mem_then_read(request):
    fs = MemoryFS(f"zip-{request.node.name}")
    with fs.open_zip("out.zip", "w", compression="lzma") as z, z.open("m", "wb") as f:
        f.write(b"lzma data" * 100)
    with fs.open_zip("out.zip") as z:
        assert z.open("m", "rb").read() == b"lzma data" * 100


def test_unknown_compression_publishes_nothing(local, tmp_path):
    with pytest.raises(ValueError, match="unknown zip compression 'zstd'"):
        local.open_zip("w.zip", "w", compression="zstd")
    gc.collect()
    assert os.listdir(tmp_path) == []
