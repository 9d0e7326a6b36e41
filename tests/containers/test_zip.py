import io
import multiprocessing
import os
import pickle
import stat
import struct
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

import pytest

import pfio
from pfio.containers.zip import Zip
from pfio.containers.zip_format import MemberInfo
from pfio.containers.zip_member import open_stream, read_member
from pfio.errors import ArchiveError, MemberNotFoundError
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS

MEMBERS = {
    "dir/": None,
    "dir/a.txt": b"alpha\nbeta\n",
    "dir/sub/b.bin": bytes(range(256)) * 40,
    "top.txt": b"top",
}


@pytest.fixture(params=[zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])
def archive(request, make_zip, local):
    make_zip(MEMBERS, compression=request.param)
    with local.open_zip("a.zip") as z:
        yield z


# -- reading ------------------------------------------------------------------------------

def test_members_read_back(archive):
    for name, data in MEMBERS.items():
        if data is not None:
            with archive.open(name, "rb") as f:
                assert f.read() == data


def test_list_names_directories_without_a_slash_as_pfio2_zip(archive):
    assert sorted(archive.list()) == ["dir", "top.txt"]


def test_list_recursive_names_the_members_only(archive):
    # "dir/sub" has no entry of its own: only "dir/sub/b.bin" implies it
    assert sorted(archive.list(recursive=True)) == [
        "dir", "dir/a.txt", "dir/sub/b.bin", "top.txt"]


def test_list_detail_names_the_same_entries(archive):
    listed = {st.filename: st.isdir() for st in archive.list(recursive=True, detail=True)}
    assert listed == {"dir": True, "dir/a.txt": False, "dir/sub/b.bin": False,
                      "top.txt": False}
    assert {st.filename for st in archive.list("dir", detail=True)} == {"a.txt", "sub"}


def test_stat_of_member(archive):
    st = archive.stat("dir/sub/b.bin")
    assert (st.filename, st.size, st.isdir()) == ("dir/sub/b.bin", 10240, False)
    assert stat.S_IMODE(st.mode) == 0o640
    with archive.backend.open("a.zip", "rb") as f:
        date_time = zipfile.ZipFile(f).getinfo("dir/sub/b.bin").date_time
    assert st.last_modified == time.mktime(date_time + (0, 0, -1))
    assert st.crc32 == zipfile.crc32(MEMBERS["dir/sub/b.bin"])


def test_stat_of_implied_and_explicit_directories(archive):
    assert archive.stat("dir").isdir() and archive.stat("dir/sub").isdir()
    assert archive.isdir("dir/sub") and not archive.isdir("top.txt")


def test_exists(archive):
    assert archive.exists("dir/a.txt") and archive.exists("dir/") and archive.exists("dir/sub")
    assert not archive.exists("dir/zzz")


def test_text_mode_read(archive):
    with archive.open("dir/a.txt", "r") as f:
        assert f.readlines() == ["alpha\n", "beta\n"]


def test_text_mode_with_encoding_and_newline(make_zip, local):
    make_zip({"w.txt": "é\r\nx".encode("latin-1")})
    with local.open_zip("a.zip") as z, z.open("w.txt", "r", encoding="latin-1",
                                               newline="") as f:
        assert f.read() == "é\r\nx"


def test_member_file_is_seekable_with_peek(archive):
    with archive.open("dir/sub/b.bin", "rb") as f:
        f.seek(256)
        assert f.peek(2)[:2] == b"\x00\x01"
        assert f.read(3) == b"\x00\x01\x02" and f.tell() == 259


def test_archive_without_directory_entries(make_zip, local):
    make_zip({"x/y/z.txt": b"z"})
    with local.open_zip("a.zip") as z:
        assert list(z.list()) == ["x"] and list(z.list("x")) == ["y"]
        assert list(z.list(recursive=True)) == ["x/y/z.txt"]
        assert z.isdir("x/y") and z.open("x/y/z.txt", "rb").read() == b"z"


def test_subfs_of_archive(archive):
    sub = archive.subfs("dir")
    assert sub.open("a.txt", "rb").read() == MEMBERS["dir/a.txt"]
    assert sorted(sub.list()) == ["a.txt", "sub"]


def test_bzip2_and_lzma_members(make_zip, local):
    for name, method in (("bz.zip", zipfile.ZIP_BZIP2), ("lz.zip", zipfile.ZIP_LZMA)):
        make_zip({"m": b"abc" * 1000}, name=name, compression=method)
        with local.open_zip(name) as z:
            assert z.open("m", "rb").read() == b"abc" * 1000


def test_utf8_and_cp437_names(tmp_path, local, zip_bytes):
    data = zip_bytes({"naïve.txt": b"u", "cafX.txt": b"c"})
    (tmp_path / "a.zip").write_bytes(data.replace(b"cafX", b"caf\x82"))  # cp437 0x82 = é
    with local.open_zip("a.zip") as z:
        assert sorted(z.list()) == ["café.txt", "naïve.txt"]
        assert z.open("café.txt", "rb").read() == b"c"


def test_archive_comment_and_leading_data(tmp_path, local, zip_bytes):
    data = zip_bytes({"m": b"payload"})
    zf_bytes = io.BytesIO(data)
    with zipfile.ZipFile(zf_bytes, "a") as zf:
        zf.comment = b"PK\x05\x06 a comment that looks like a record"
    (tmp_path / "a.zip").write_bytes(b"#!/bin/sh\nexit 0\n" + zf_bytes.getvalue())
    with local.open_zip("a.zip") as z:
        assert z.open("m", "rb").read() == b"payload"


# -- zip64 --------------------------------------------------------------------------------

def test_zip64_records_and_extra_fields(monkeypatch, make_zip, local):
    # lowering zipfile's limits makes it write genuine zip64 end records and extra fields
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 100)
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 2)
    members = {f"m{i}": bytes([i]) * 300 for i in range(4)}
    make_zip(members)
    raw = (local.open("a.zip", "rb").read())
    assert b"PK\x06\x06" in raw and b"PK\x06\x07" in raw
    with local.open_zip("a.zip") as z:
        assert {n: z.open(n, "rb").read() for n in z.list()} == members


def _many_empty_members(count: int) -> bytes:
    """An archive of ``count`` empty stored members, packed directly (zipfile takes seconds)."""
    local_parts, central_parts, offset = [], [], 0
    for i in range(count):
        name = f"d{i % 7}/{i}".encode()
        header = struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0x21, 0, 0, 0,
                             len(name), 0) + name
        central_parts.append(struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 0, 20, 0, 0, 0,
                                         0, 0x21, 0, 0, 0, len(name), 0, 0, 0, 0, 0, offset)
                             + name)
        local_parts.append(header)
        offset += len(header)
    central = b"".join(central_parts)
    end64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count,
                        len(central), offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, offset + len(central), 1)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, len(central), offset, 0)
    return b"".join(local_parts) + central + end64 + locator + end


def test_more_than_65535_members(tmp_path, local):
    count = 65_600
    (tmp_path / "a.zip").write_bytes(_many_empty_members(count))
    assert len(zipfile.ZipFile(tmp_path / "a.zip").namelist()) == count  # a valid archive
    with local.open_zip("a.zip") as z:
        assert sum(1 for _ in z.list(recursive=True)) == count  # 7 implied directories
        assert sum(1 for _ in z.list()) == 7
        assert z.exists(f"d{count % 7}/{count - 7}")


def test_member_beyond_4_gib_in_sparse_file(tmp_path, local):
    path = tmp_path / "big.zip"
    with open(path, "wb") as f:
        f.truncate((4 << 30) + (100 << 20))  # a 4.1 GiB hole
    if os.stat(path).st_blocks * 512 > (1 << 20):
        pytest.skip("this filesystem does not make sparse files; 4 GiB would be written")
    with zipfile.ZipFile(path, "a") as zf:  # appends an archive after the hole
        zf.writestr("far.txt", b"beyond 4 GiB")
    with local.open_zip("big.zip") as z:
        assert z.open("far.txt", "rb").read() == b"beyond 4 GiB"


# -- costs: reads of the backing file (one request each on S3) -----------------------------

def _put(fs, data):
    with fs.open("a.zip", "wb") as f:
        f.write(data)


def test_open_costs_one_read_when_the_tail_covers_the_directory(counting_fs, zip_bytes):
    _put(counting_fs, zip_bytes(MEMBERS))
    counting_fs.open_zip("a.zip")
    assert counting_fs.counter["reads"] == 1


def test_open_costs_two_reads_with_a_large_directory(counting_fs, zip_bytes):
    members = {f"{'n' * 200}/{i}": b"" for i in range(600)}  # > 64 KiB of directory
    _put(counting_fs, zip_bytes(members))
    counting_fs.open_zip("a.zip")
    assert counting_fs.counter["reads"] == 2


def test_member_read_costs_one_read_near_its_size(counting_fs, zip_bytes):
    data = os.urandom(100_000)
    _put(counting_fs, zip_bytes({"pad": os.urandom(200_000), "m": data}))
    z = counting_fs.open_zip("a.zip")
    before = dict(counting_fs.counter)
    assert z.open("m", "rb").read() == data
    assert counting_fs.counter["reads"] - before["reads"] == 1
    assert counting_fs.counter["bytes"] - before["bytes"] <= len(data) + 65536


def test_streamed_member_costs_one_read_per_chunk_and_none_to_seek_back(zip_bytes):
    data = os.urandom(100_000)
    reads = []
    archive = zip_bytes({"m": data})

    def read_at(offset, size):
        reads.append(size)
        return archive[offset:offset + size]

    info = zipfile.ZipFile(io.BytesIO(archive)).getinfo("m")
    member = MemberInfo(0, len(data), 0, info.CRC, 0, local_guess=0)
    with open_stream(read_at, member, len(data), "a.zip", "m", 16384, lambda: None) as f:
        reads.clear()
        assert f.read(10) == data[:10]
        f.seek(0)
        assert f.read(100) == data[:100]
        assert reads == [16384]  # the seek back is served by the chunk read
        assert f.read() == data[100:]
    assert reads == [16384] * 6 + [100_000 - 6 * 16384]


def test_local_header_longer_than_guessed_costs_a_second_read(zip_bytes):
    name = "n" * 400
    data = zip_bytes({name: b"payload"})
    reads = []

    def read_at(offset, size):
        reads.append(size)
        return data[offset:offset + size]

    info = MemberInfo(0, 7, 0, zipfile.crc32(b"payload"), 0, local_guess=0)
    assert read_member(read_at, info, 7, "a.zip", name) == b"payload"
    assert len(reads) == 2


def test_truncated_deflate_data(tmp_path, local, zip_bytes):
    data = zip_bytes({"m": os.urandom(3000)}, compression=zipfile.ZIP_DEFLATED)
    out = bytearray(data)
    central = out.find(b"PK\x01\x02")
    csize = struct.unpack_from("<L", out, central + 20)[0]
    for at in (18, central + 20):  # compressed size in the local and central headers
        struct.pack_into("<L", out, at, csize - 100)
    (tmp_path / "a.zip").write_bytes(bytes(out))
    with local.open_zip("a.zip") as z, pytest.raises(ArchiveError, match="decodes to"):
        z.open("m", "rb")


def test_threads_share_one_archive(request, zip_bytes):
    fs = MemoryFS(f"zip-{request.node.name}")  # no file descriptor: seek + read under a lock
    members = {f"m{i}": os.urandom(1000 + i) for i in range(64)}
    with fs.open("a.zip", "wb") as f:
        f.write(zip_bytes(members))
    with fs.open_zip("a.zip") as z, ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda n: z.open(n, "rb").read(), list(members) * 4))
    assert got == list(members.values()) * 4


# -- large members: streamed ------------------------------------------------------------

@pytest.fixture(params=[zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
                        zipfile.ZIP_LZMA], ids=["stored", "deflated", "bzip2", "lzma"])
def streamed(request, make_zip, local):
    data = os.urandom(50_000) + b"x" * 200_000
    make_zip({"big": data}, compression=request.param)
    with Zip(local, "a.zip", whole_member_limit=1000, stream_chunk_size=4096) as z:
        yield z, data


def test_streamed_member_reads_whole(streamed):
    z, data = streamed
    with z.open("big", "rb") as f:
        assert isinstance(f, io.BufferedReader)
        assert f.read() == data


def test_streamed_member_seeks_both_ways(streamed):
    z, data = streamed
    with z.open("big", "rb") as f:
        f.seek(200_000)
        assert f.read(10) == data[200_000:200_010]
        f.seek(5)
        assert f.read(10) == data[5:15]
        f.seek(-3, io.SEEK_END)
        assert f.read() == data[-3:] and f.read() == b""


def test_streamed_member_unbuffered(streamed):
    z, data = streamed
    with z.open("big", "rb", buffering=0) as f:
        assert f.readall() == data


def test_archive_closed_while_member_streams(streamed):
    z, data = streamed
    f = z.open("big", "rb")
    z.close()
    assert f.read() == data
    assert z._io.file is not None  # released only when the member closes
    f.close()
    assert z._io.file is None


def test_streamed_crc_mismatch(make_zip, local, tmp_path):
    data = b"y" * 5000
    path = make_zip({"big": data})
    path.write_bytes(path.read_bytes().replace(b"y" * 10, b"y" * 9 + b"z", 1))
    with Zip(local, "a.zip", whole_member_limit=100) as z, z.open("big", "rb") as f:
        with pytest.raises(ArchiveError, match="CRC-32 mismatch in member 'big'"):
            f.read()


# -- errors ---------------------------------------------------------------------------------

def test_missing_member_is_file_not_found_and_key_error(archive):
    with pytest.raises(FileNotFoundError) as info:
        archive.open("nope.txt", "rb")
    assert isinstance(info.value, KeyError) and isinstance(info.value, MemberNotFoundError)


def test_open_directory_is_a_directory(archive):
    with pytest.raises(IsADirectoryError):
        archive.open("dir", "rb")


def test_list_of_a_file_is_not_a_directory(archive):
    with pytest.raises(NotADirectoryError):
        list(archive.list("top.txt"))


def test_members_cannot_be_written_in_read_mode(archive):
    with pytest.raises(io.UnsupportedOperation):
        archive.open("new.txt", "wb")


def test_missing_archive(local):
    with pytest.raises(FileNotFoundError):
        local.open_zip("none.zip")


@pytest.mark.parametrize("content", [b"", b"not a zip at all" * 10], ids=["empty", "text"])
def test_not_a_zip(tmp_path, local, content):
    (tmp_path / "a.zip").write_bytes(content)
    with pytest.raises(ArchiveError, match="a.zip is not a zip archive"):
        local.open_zip("a.zip")


def test_truncated_archive(make_zip, local):
    path = make_zip(MEMBERS)
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(ArchiveError, match="a.zip"):
        local.open_zip("a.zip")


def test_directory_extending_past_the_end(make_zip, local):
    path = make_zip(MEMBERS)
    data = bytearray(path.read_bytes())
    eocd = data.rfind(b"PK\x05\x06")
    struct.pack_into("<L", data, eocd + 12, 10**6)  # central directory size
    path.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="truncated"):
        local.open_zip("a.zip")


def test_bad_central_directory_signature(make_zip, local):
    path = make_zip(MEMBERS)
    data = bytearray(path.read_bytes())
    second = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02") + 1)
    data[second + 3] = 9
    path.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="bad central directory record #1"):
        local.open_zip("a.zip")


def test_member_offset_beyond_the_directory(make_zip, local):
    path = make_zip({"m": b"data"})
    data = bytearray(path.read_bytes())
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<L", data, central + 42, 10**6)  # local header offset
    path.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="member 'm' lies beyond"):
        local.open_zip("a.zip")


def test_bad_local_header(make_zip, local):
    path = make_zip({"m": b"data"})
    path.write_bytes(path.read_bytes().replace(b"PK\x03\x04", b"PK\x03\x00", 1))
    with local.open_zip("a.zip") as z, pytest.raises(ArchiveError, match="local header of"):
        z.open("m", "rb")


def test_member_larger_than_its_directory_size(tmp_path, local, zip_bytes):
    out = bytearray(zip_bytes({"m": b"\0" * 100_000}, compression=zipfile.ZIP_DEFLATED))
    central = out.find(b"PK\x01\x02")
    struct.pack_into("<L", out, central + 24, 10)  # uncompressed size: 10 bytes
    (tmp_path / "a.zip").write_bytes(bytes(out))
    with local.open_zip("a.zip") as z, pytest.raises(ArchiveError, match="decodes to 11 "):
        z.open("m", "rb")  # decoding stopped one byte past the size


def test_crc_mismatch_names_archive_and_member(make_zip, local):
    path = make_zip({"m": b"original data"})
    path.write_bytes(path.read_bytes().replace(b"original", b"modified"))
    with local.open_zip("a.zip") as z, pytest.raises(ArchiveError) as info:
        z.open("m", "rb")
    assert "a.zip" in str(info.value) and "'m'" in str(info.value)


def _set_method_and_flags(data: bytes, method: int, flags: int) -> bytes:
    out = bytearray(data)
    for sig, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = out.find(sig)
        struct.pack_into("<2H", out, pos + at, flags, method)
    return bytes(out)


def test_unsupported_method_is_named(tmp_path, local, zip_bytes):
    (tmp_path / "a.zip").write_bytes(_set_method_and_flags(zip_bytes({"m": b"x"}), 9, 0))
    with local.open_zip("a.zip") as z, pytest.raises(io.UnsupportedOperation,
                                                     match="method 9 \\(deflate64\\)"):
        z.open("m", "rb")


def test_encrypted_member(tmp_path, local, zip_bytes):
    (tmp_path / "a.zip").write_bytes(_set_method_and_flags(zip_bytes({"m": b"x"}), 0, 1))
    with local.open_zip("a.zip") as z, pytest.raises(io.UnsupportedOperation,
                                                     match="encrypted"):
        z.open("m", "rb")


def test_closed_archive_cannot_open_members(archive):
    archive.close()
    with pytest.raises(ValueError, match="closed"):
        archive.open("top.txt", "rb")


# -- names that climb out ----------------------------------------------------------------

def test_traversal_names_stay_inside(tmp_path, zip_bytes):
    (tmp_path / "secret.txt").write_bytes(b"outside")
    inner = tmp_path / "in"
    inner.mkdir()
    (inner / "a.zip").write_bytes(zip_bytes({"../secret.txt": b"inside",
                                             "/etc/abs.txt": b"abs", "a/../../b": b"b"}))
    with Local(inner).open_zip("a.zip") as z:
        assert sorted(z.list(recursive=True)) == ["b", "etc/abs.txt", "secret.txt"]
        assert sorted(z.list()) == ["b", "etc", "secret.txt"]
        assert z.open("../secret.txt", "rb").read() == b"inside"
        assert z.open("/etc/abs.txt", "rb").read() == b"abs"
        with pytest.raises(FileNotFoundError):
            z.open("../../secret.txt/x", "rb")


# -- processes ------------------------------------------------------------------------------

def _read_member(z: Zip) -> bytes:
    return z.open("dir/a.txt", "rb").read()


_INHERITED = {}


def _read_inherited() -> bytes:
    return _INHERITED["zip"].open("dir/sub/b.bin", "rb").read()


def test_archive_inherited_by_fork(archive):
    archive.open("top.txt", "rb").read()  # opens the backing file before forking
    _INHERITED["zip"] = archive
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            assert pool.apply(_read_inherited) == MEMBERS["dir/sub/b.bin"]
    finally:
        _INHERITED.clear()
    assert archive.open("top.txt", "rb").read() == b"top"  # the parent's file still works


def test_pickled_archive_reads(archive):
    clone = pickle.loads(pickle.dumps(archive))
    assert clone.open("top.txt", "rb").read() == b"top"


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_read_in_child_process(archive, method):
    archive.open("top.txt", "rb").read()  # the parent's backing file is open before forking
    with multiprocessing.get_context(method).Pool(1) as pool:
        assert pool.apply(_read_member, (archive,)) == MEMBERS["dir/a.txt"]


# -- nesting and URLs ------------------------------------------------------------------

def test_zip_in_zip(tmp_path, local, zip_bytes):
    inner = zip_bytes(MEMBERS, compression=zipfile.ZIP_DEFLATED)
    (tmp_path / "outer.zip").write_bytes(zip_bytes({"data/inner.zip": inner}))
    with local.open_zip("outer.zip") as outer, outer.open_zip("data/inner.zip") as z:
        assert z.open("dir/sub/b.bin", "rb").read() == MEMBERS["dir/sub/b.bin"]


def test_streamed_zip_in_zip(tmp_path, local, zip_bytes):
    inner = zip_bytes({"m": b"q" * 3000})
    (tmp_path / "outer.zip").write_bytes(zip_bytes({"inner.zip": inner}))
    with Zip(local, "outer.zip", whole_member_limit=100) as outer:
        with Zip(outer, "inner.zip", whole_member_limit=100) as z:
            assert z.open("m", "rb").read() == b"q" * 3000


def test_zip_in_tar(tmp_path, local, zip_bytes):
    inner = zip_bytes(MEMBERS)
    with tarfile.open(tmp_path / "a.tar", "w") as tf:
        info = tarfile.TarInfo("x/in.zip")
        info.size = len(inner)
        tf.addfile(info, io.BytesIO(inner))
    with local.open_tar("a.tar") as tar, tar.open_zip("x/in.zip") as z:
        assert z.open("dir/a.txt", "rb").read() == MEMBERS["dir/a.txt"]
    with pfio.open_url(f"{tmp_path}/a.tar/x/in.zip/top.txt", "rb") as f:
        assert f.read() == b"top"


def test_zip_on_mem(request, zip_bytes):
    fs = MemoryFS(f"zip-{request.node.name}")
    with fs.open("d/a.zip", "wb") as f:
        f.write(zip_bytes(MEMBERS))
    with fs.open_zip("d/a.zip") as z:
        assert z.open("top.txt", "rb").read() == b"top"


def test_from_url_opens_the_archive(make_zip, tmp_path):
    make_zip(MEMBERS)
    with pfio.from_url(str(tmp_path / "a.zip")) as z:
        assert isinstance(z, Zip) and sorted(z.list()) == ["dir", "top.txt"]


def test_from_url_inside_the_archive(make_zip, tmp_path):
    make_zip(MEMBERS)
    fs = pfio.from_url(str(tmp_path / "a.zip" / "dir"))
    assert fs.open("a.txt", "rb").read() == MEMBERS["dir/a.txt"]


def test_open_url_of_a_member(make_zip, tmp_path):
    make_zip(MEMBERS)
    with pfio.open_url(str(tmp_path / "a.zip" / "dir" / "a.txt")) as f:
        assert f.read() == "alpha\nbeta\n"


def test_open_url_of_a_member_in_nested_zip(tmp_path, zip_bytes):
    (tmp_path / "o.zip").write_bytes(zip_bytes({"i.zip": zip_bytes(MEMBERS)}))
    with pfio.open_url(f"{tmp_path}/o.zip/i.zip/top.txt", "rb") as f:
        assert f.read() == b"top"


def test_open_url_of_missing_member(make_zip, tmp_path):
    make_zip(MEMBERS)
    with pytest.raises(KeyError):
        pfio.open_url(str(tmp_path / "a.zip" / "nope"), "rb")


# -- stored order -------------------------------------------------------------------------

def test_stored_members_follow_the_data_not_the_central_directory(local, tmp_path):
    with zipfile.ZipFile(tmp_path / "o.zip", "w") as zf:
        for name in ("z.txt", "d/", "a.txt", "m.txt"):
            zf.writestr(name, b"" if name.endswith("/") else name.encode())
        zf.filelist.reverse()  # the central directory lists them backwards
    with local.open_zip("o.zip") as z:
        assert z.stored_members() == ["z.txt", "a.txt", "m.txt"]


def test_stored_members_open_as_named(archive):
    assert {name: archive.open(name, "rb").read() for name in archive.stored_members()} == \
        {name: data for name, data in MEMBERS.items() if data is not None}


def test_stored_members_of_a_view_are_under_its_root(archive):
    view = archive.subfs("dir")
    assert view.stored_members() == ["a.txt", "sub/b.bin"]
    assert view.open("sub/b.bin", "rb").read() == MEMBERS["dir/sub/b.bin"]
