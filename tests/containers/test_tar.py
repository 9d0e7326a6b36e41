import errno
import gzip
import io
import multiprocessing
import os
import pickle
import stat
import tarfile
import zipfile

import pytest

import pfio
from pfio.containers.tar import Tar
from pfio.errors import ArchiveError, MemberNotFoundError
from pfio.fs.memory import MemoryFS

MTIME = 1_600_000_000
BIG = bytes(range(251)) * 4000  # ~1 MB, streamed when whole_member_limit is small
FILES = {
    "dir/a.txt": b"alpha\nbeta\n",
    "dir/sub/b.bin": bytes(range(256)) * 40,
    "top.txt": b"top",
}


def _info(name, kind=tarfile.REGTYPE, size=0, linkname=""):
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname, info.mtime = kind, size, linkname, MTIME
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o640
    return info


def tar_bytes(files, fmt=tarfile.PAX_FORMAT, dirs=(), links=(), symlinks=(), gz=False):
    """An archive in memory: ``files`` {name: data}, ``links``/``symlinks`` (name, target)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz" if gz else "w", format=fmt) as tf:
        for name in dirs:
            tf.addfile(_info(name, tarfile.DIRTYPE))
        for name, data in files.items():
            tf.addfile(_info(name, size=len(data)), io.BytesIO(data))
        for name, target in links:
            tf.addfile(_info(name, tarfile.LNKTYPE, linkname=target))
        for name, target in symlinks:
            tf.addfile(_info(name, tarfile.SYMTYPE, linkname=target))
    return out.getvalue()


def write(tmp_path, data, name="a.tar"):
    (tmp_path / name).write_bytes(data)
    return str(tmp_path / name)


FORMATS = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT}


@pytest.fixture(params=list(FORMATS))
def archive(request, tmp_path, local):
    write(tmp_path, tar_bytes(FILES, FORMATS[request.param], dirs=["dir"]))
    with local.open_tar("a.tar") as tar:
        yield tar


# -- reading ------------------------------------------------------------------------------

def test_members_read_back(archive):
    for name, data in FILES.items():
        with archive.open(name, "rb") as f:
            assert f.read() == data


def test_list_top_marks_directories(archive):
    assert sorted(archive.list()) == ["dir/", "top.txt"]


def test_list_recursive_includes_implied_directories(archive):
    assert sorted(archive.list(recursive=True)) == [
        "dir/", "dir/a.txt", "dir/sub/", "dir/sub/b.bin", "top.txt"]


def test_stat_of_member(archive):
    st = archive.stat("dir/sub/b.bin")
    assert (st.filename, st.size, st.last_modified) == ("dir/sub/b.bin", 10240, MTIME)
    assert stat.S_ISREG(st.mode) and stat.S_IMODE(st.mode) == 0o640


def test_isdir_of_explicit_and_implied_directories(archive):
    assert archive.isdir("dir") and archive.isdir("dir/sub")
    assert not archive.isdir("top.txt") and not archive.isdir("nope")


def test_exists(archive):
    assert archive.exists("dir/sub/b.bin") and archive.exists("dir/sub")
    assert not archive.exists("dir/c.txt")


def test_missing_member_is_file_not_found_and_key_error(archive):
    with pytest.raises(MemberNotFoundError) as info:
        archive.open("dir/c.txt", "rb")
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, KeyError)


def test_opening_a_directory_raises(archive):
    with pytest.raises(IsADirectoryError):
        archive.open("dir/sub", "rb")


def test_listing_a_file_raises(archive):
    with pytest.raises(NotADirectoryError):
        list(archive.list("top.txt"))


def test_text_mode_read(archive):
    with archive.open("dir/a.txt", "r", encoding="utf-8") as f:
        assert list(f) == ["alpha\n", "beta\n"]


def test_subfs_reads_relative_names(archive):
    assert archive.subfs("dir").open("sub/b.bin", "rb").read() == FILES["dir/sub/b.bin"]


def test_writing_in_read_mode_is_unsupported(archive):
    with pytest.raises(io.UnsupportedOperation):
        archive.open("new.txt", "wb")


def test_mkdir_in_read_mode_is_unsupported(archive):
    with pytest.raises(io.UnsupportedOperation):
        archive.mkdir("newdir")


def test_reading_after_close_raises(archive):
    archive.close()
    with pytest.raises(ValueError):
        archive.open("top.txt", "rb")


@pytest.mark.parametrize("fmt", ["gnu", "pax"])
def test_long_names(tmp_path, local, fmt):
    name = "/".join(["d" * 60] * 3) + "/" + "f" * 120 + ".txt"
    write(tmp_path, tar_bytes({name: b"long"}, FORMATS[fmt]))
    tar = local.open_tar("a.tar")
    assert tar.open(name, "rb").read() == b"long"
    assert list(tar.list(recursive=True))[-1] == name


def test_pax_unicode_name(tmp_path, local):
    write(tmp_path, tar_bytes({"データ/ünï.txt": b"u"}))
    assert local.open_tar("a.tar").open("データ/ünï.txt", "rb").read() == b"u"


def test_later_member_of_the_same_name_wins(tmp_path, local):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tf:
        for data in (b"old", b"new!"):
            tf.addfile(_info("x", size=len(data)), io.BytesIO(data))
    write(tmp_path, out.getvalue())
    tar = local.open_tar("a.tar")
    assert tar.open("x", "rb").read() == b"new!" and list(tar.list()) == ["x"]


# -- links and special members ------------------------------------------------------------

@pytest.fixture
def linked(tmp_path, local):
    write(tmp_path, tar_bytes(
        FILES, dirs=["dir"], links=[("hard", "dir/a.txt")],
        symlinks=[("dir/rel", "sub/b.bin"), ("chain", "dir/rel"), ("out", "../../etc/passwd"),
                  ("abs", "/etc/passwd"), ("gone", "nothing"), ("todir", "dir"),
                  ("loop1", "loop2"), ("loop2", "loop1")]))
    return local.open_tar("a.tar")


def test_hard_link_reads_its_target(linked):
    assert linked.open("hard", "rb").read() == FILES["dir/a.txt"]
    assert linked.stat("hard").size == len(FILES["dir/a.txt"])


def test_relative_symlink_reads_its_target(linked):
    assert linked.open("dir/rel", "rb").read() == FILES["dir/sub/b.bin"]


def test_symlink_to_symlink_reads_the_final_target(linked):
    assert linked.open("chain", "rb").read() == FILES["dir/sub/b.bin"]


def test_symlink_mode_says_link(linked):
    assert stat.S_ISLNK(linked.stat("dir/rel").mode)


@pytest.mark.parametrize("name", ["out", "abs", "gone"])
def test_symlink_outside_or_dangling_raises_file_not_found(linked, name):
    with pytest.raises(FileNotFoundError, match=name):
        linked.open(name, "rb")


def test_symlink_to_directory_raises(linked):
    with pytest.raises(IsADirectoryError):
        linked.open("todir", "rb")


def test_symlink_loop_raises(linked):
    with pytest.raises(OSError, match="loop"):
        linked.open("loop1", "rb")


def _special_tar():
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tf:
        tf.addfile(_info("fifo", tarfile.FIFOTYPE))
        tf.addfile(_info("dev", tarfile.CHRTYPE))
        tf.addfile(_info("sparse", tarfile.GNUTYPE_SPARSE, size=4), io.BytesIO(b"abcd"))
        tf.addfile(_info("plain", size=2), io.BytesIO(b"ok"))
    return out.getvalue()


def test_devices_and_fifos_are_skipped(tmp_path, local):
    write(tmp_path, _special_tar())
    assert sorted(local.open_tar("a.tar").list()) == ["plain", "sparse"]


def test_sparse_member_is_unsupported(tmp_path, local):
    write(tmp_path, _special_tar())
    tar = local.open_tar("a.tar")
    with pytest.raises(io.UnsupportedOperation, match="'sparse'.*sparse"):
        tar.open("sparse", "rb")
    assert tar.open("plain", "rb").read() == b"ok"


# -- traversal ----------------------------------------------------------------------------

def test_traversal_names_are_kept_inside(tmp_path, local):
    (tmp_path / "secret.txt").write_bytes(b"secret")
    write(tmp_path, tar_bytes({"../../evil.txt": b"e", "/abs/x.txt": b"x", "a/../b.txt": b"b"}))
    tar = local.open_tar("a.tar")
    assert sorted(tar.list(recursive=True)) == ["abs/", "abs/x.txt", "b.txt", "evil.txt"]
    assert tar.open("evil.txt", "rb").read() == b"e"


@pytest.mark.parametrize("path", ["../secret.txt", "/../secret.txt", "a/../../secret.txt"])
def test_paths_cannot_reach_outside(tmp_path, local, path):
    (tmp_path / "secret.txt").write_bytes(b"secret")
    write(tmp_path, tar_bytes(FILES))
    tar = local.open_tar("a.tar")
    with pytest.raises(MemberNotFoundError):
        tar.open(path, "rb")
    with pytest.raises(PermissionError):  # a view refuses names climbing out of it
        tar.subfs("dir").open("../" + path, "rb")


# -- large members: streamed ----------------------------------------------------------------

@pytest.fixture
def streamed(tmp_path, local):
    write(tmp_path, tar_bytes({"big": BIG, "small": b"s"}))
    return local.open_tar("a.tar", whole_member_limit=1000, stream_chunk_size=64 << 10)


def test_large_member_streams_whole(streamed):
    with streamed.open("big", "rb") as f:
        assert isinstance(f, io.BufferedReader)
        assert f.read() == BIG


def test_large_member_seek_and_read(streamed):
    with streamed.open("big", "rb") as f:
        f.seek(500_000)
        assert f.read(1000) == BIG[500_000:501_000]
        f.seek(-10, io.SEEK_END)
        assert f.read() == BIG[-10:] and f.tell() == len(BIG)
        f.seek(3)
        assert f.read(5) == BIG[3:8]


def test_large_member_readinto_unbuffered(streamed):
    with streamed.open("big", "rb", buffering=0) as f:
        buf = bytearray(300_000)
        assert f.readinto(buf) == len(buf) and bytes(buf) == BIG[:300_000]


def test_large_member_text_lines(tmp_path, local):
    text = "".join(f"line {i}\n" for i in range(50_000))
    write(tmp_path, tar_bytes({"t.txt": text.encode()}))
    tar = local.open_tar("a.tar", whole_member_limit=1000)
    with tar.open("t.txt", "r") as f:
        assert sum(1 for _ in f) == 50_000


def test_archive_stays_usable_for_open_members_after_close(streamed):
    f = streamed.open("big", "rb")
    streamed.close()
    assert f.read(4) == BIG[:4]
    f.close()
    assert streamed._io.file is None


# -- reads of the backing file ------------------------------------------------------------

class CountingFS(MemoryFS):
    """mem:// whose files count ``read_at`` calls (the way S3 readers serve ranges)."""

    def __init__(self, name):
        super().__init__(name)
        self.reads = []

    def _open_binary(self, path, mode, *args, **kwargs):
        f = super()._open_binary(path, mode, *args, **kwargs)
        if mode.kind == "r":
            fs = self

            def read_at(offset, size):
                fs.reads.append((offset, size))
                f.seek(offset)
                return f.read(size)

            f.read_at = read_at
        return f


@pytest.fixture
def counting(request):
    fs = CountingFS(f"tar-count-{request.node.name}")
    files = {f"m{i:03d}": bytes([i]) * 4096 for i in range(100)}
    files["huge"] = BIG * 4
    with fs.open("a.tar", "wb") as f:
        f.write(tar_bytes(files))
    return fs, files


def test_small_member_read_is_one_read_of_its_bytes(counting):
    fs, files = counting
    tar = fs.open_tar("a.tar")
    fs.reads.clear()
    assert tar.open("m042", "rb").read() == files["m042"]
    assert len(fs.reads) == 1 and fs.reads[0][1] == 4096


def test_index_of_small_members_takes_few_large_reads(counting):
    fs, _ = counting
    fs.open_tar("a.tar")
    assert len(fs.reads) <= 6  # read-ahead doubles while headers follow each other


def test_index_skips_large_member_data(counting):
    fs, files = counting
    tar = fs.open_tar("a.tar")
    assert sum(size for _, size in fs.reads) < len(files["huge"]) // 4
    assert tar.stat("huge").size == len(files["huge"])


def test_large_reads_of_a_streamed_member_grow_from_the_last_read(counting):
    fs, files = counting
    tar = fs.open_tar("a.tar", whole_member_limit=1000, stream_chunk_size=1 << 20)
    fs.reads.clear()
    with tar.open("huge", "rb") as f:
        parts = list(iter(lambda: f.read(200_000), b""))
    assert b"".join(parts) == files["huge"]
    # (io.BufferedReader asks for whole buffers: 196,608 of the first 200,000 bytes), then
    # twice as much as the last read each time, up to the 1 MiB limit, then the rest
    assert [size for _, size in fs.reads] == [196_608, 393_216, 786_432, 1 << 20, 1 << 20,
                                              len(files["huge"]) - 3_473_408]


# -- compressed archives ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["a.tar.gz", "a.tgz", "a.tar"])
def test_gzip_archive_reads(tmp_path, local, name):
    write(tmp_path, tar_bytes(FILES, dirs=["dir"], gz=True), name)
    tar = local.open_tar(name)
    assert tar.compressed
    assert sorted(tar.list(recursive=True)) == [
        "dir/", "dir/a.txt", "dir/sub/", "dir/sub/b.bin", "top.txt"]
    for member, data in FILES.items():
        assert tar.open(member, "rb").read() == data


def test_uncompressed_archive_named_tgz_reads(tmp_path, local):
    write(tmp_path, tar_bytes(FILES), "a.tgz")
    tar = local.open_tar("a.tgz")
    assert not tar.compressed and tar.open("top.txt", "rb").read() == b"top"


def test_gzip_large_member_streams_and_seeks_back(tmp_path, local):
    write(tmp_path, tar_bytes({"first": b"1" * 5000, "big": BIG}, gz=True), "a.tgz")
    tar = local.open_tar("a.tgz", whole_member_limit=1000)
    with tar.open("big", "rb") as f:
        assert f.read(10) == BIG[:10]
        f.seek(700_000)
        assert f.read(10) == BIG[700_000:700_010]
        f.seek(5)
        assert f.read(10) == BIG[5:15]


def test_gzip_archive_is_read_only(tmp_path, local):
    write(tmp_path, tar_bytes(FILES, gz=True), "a.tgz")
    with pytest.raises(io.UnsupportedOperation):
        local.open_tar("a.tgz").open("x", "wb")


def test_truncated_gzip_archive_raises(tmp_path, local):
    data = tar_bytes({"x": os.urandom(50_000)}, gz=True)
    write(tmp_path, data[: len(data) // 2], "a.tgz")
    with pytest.raises(ArchiveError, match="a.tgz.*truncated"):
        local.open_tar("a.tgz")


def test_corrupt_gzip_data_raises(tmp_path, local):
    data = bytearray(tar_bytes({"x": os.urandom(50_000)}, gz=True))
    data[100:200] = bytes(100)
    write(tmp_path, bytes(data), "a.tgz")
    with pytest.raises(ArchiveError, match="a.tgz"):
        local.open_tar("a.tgz")


def test_gzip_of_something_else_raises(tmp_path, local):
    write(tmp_path, gzip.compress(b"not a tar at all" * 100), "a.tgz")
    with pytest.raises(ArchiveError, match="a.tgz"):
        local.open_tar("a.tgz")


# -- corrupt archives -----------------------------------------------------------------------

@pytest.mark.parametrize("data", [b"", b"not a tar archive" * 100, bytes(range(256)) * 4],
                         ids=["empty", "text", "binary"])
def test_not_a_tar_raises_archive_error(tmp_path, local, data):
    write(tmp_path, data)
    with pytest.raises(ArchiveError, match="a.tar"):
        local.open_tar("a.tar")


def test_bad_checksum_after_first_member_raises(tmp_path, local):
    data = bytearray(tar_bytes({"one": b"1" * 600, "two": b"2"}, tarfile.USTAR_FORMAT))
    second = 512 + 1024  # header, then two blocks of data
    data[second + 148:second + 156] = b"0000000\0"  # a wrong checksum
    write(tmp_path, bytes(data))
    with pytest.raises(ArchiveError, match=f"a.tar.*offset {second}.*checksum"):
        local.open_tar("a.tar")


def test_data_cut_short_raises_at_open(tmp_path, local):
    data = tar_bytes({"one": b"1" * 600, "two": b"2" * 5000}, tarfile.USTAR_FORMAT)
    write(tmp_path, data[:4000])
    with pytest.raises(ArchiveError, match="a.tar.*truncated"):
        local.open_tar("a.tar")


def test_header_cut_short_raises(tmp_path, local):
    data = tar_bytes({"one": b"1" * 512, "two": b"2"}, tarfile.USTAR_FORMAT)
    write(tmp_path, data[:1024 + 100])
    with pytest.raises(ArchiveError, match="a.tar.*cut short"):
        local.open_tar("a.tar")


def test_empty_archive_lists_nothing(tmp_path, local):
    write(tmp_path, tar_bytes({}))
    assert list(local.open_tar("a.tar").list()) == []


def test_missing_end_blocks_are_accepted(tmp_path, local):
    data = tar_bytes({"one": b"1" * 512}, tarfile.USTAR_FORMAT)
    write(tmp_path, data[:1024])
    assert local.open_tar("a.tar").open("one", "rb").read() == b"1" * 512


@pytest.mark.parametrize("limit", [1 << 20, 1000], ids=["whole", "streamed"])
def test_member_data_beyond_end_of_file_raises_on_read(tmp_path, local, limit):
    path = write(tmp_path, tar_bytes({"a": b"a" * 3000, "b": BIG}))
    tar = local.open_tar("a.tar", whole_member_limit=limit)
    assert tar.open("a", "rb").read() == b"a" * 3000  # the backing file is open now
    os.truncate(path, 512 * 8 + len(BIG) // 2)
    with pytest.raises(ArchiveError, match="a.tar.*'b'.*cut short"):
        tar.open("b", "rb").read()


# -- processes ------------------------------------------------------------------------------

def read_member(tar, name):
    with tar.open(name, "rb") as f:
        return f.read()


def test_pickled_archive_reads(archive):
    clone = pickle.loads(pickle.dumps(archive))
    assert clone.open("dir/a.txt", "rb").read() == FILES["dir/a.txt"]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_read_in_child_process(archive, method):
    archive.open("top.txt", "rb").read()  # the parent's backing file is open
    with multiprocessing.get_context(method).Pool(1) as pool:
        assert pool.apply(read_member, (archive, "dir/sub/b.bin")) == FILES["dir/sub/b.bin"]
    assert archive.open("top.txt", "rb").read() == b"top"


# -- writing ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["w.tar", "w.tar.gz"])
def test_write_round_trip(local, tmp_path, name):
    with local.open_tar(name, "w") as tar:
        tar.makedirs("d/e")
        with tar.open("d/e/bin", "wb") as f:
            f.write(b"\0\1\2")
        with tar.open("d/text.txt", "w", encoding="utf-8") as f:
            f.write("héllo\n")
    with local.open_tar(name) as tar:
        assert sorted(tar.list(recursive=True)) == ["d/", "d/e/", "d/e/bin", "d/text.txt"]
        assert tar.open("d/e/bin", "rb").read() == b"\0\1\2"
        assert tar.open("d/text.txt", "r", encoding="utf-8").read() == "héllo\n"
    with tarfile.open(tmp_path / name) as tf:  # readable by other tools
        assert tf.extractfile("d/text.txt").read() == "héllo\n".encode()
        assert tf.getmember("d/e").isdir()


def test_written_members_are_indexed_while_writing(local):
    with local.open_tar("w.tar", "w") as tar:
        with tar.open("x/y", "wb") as f:
            f.write(b"12345")
        assert tar.exists("x/y") and tar.isdir("x")
        assert list(tar.list("x")) == ["y"] and tar.stat("x/y").size == 5


def test_members_spill_beyond_spool_limit(local):
    with local.open_tar("w.tar", "w", spool_limit=1000) as tar:
        with tar.open("big", "wb") as f:
            f.write(BIG)
    assert local.open_tar("w.tar").open("big", "rb").read() == BIG


def test_two_members_open_at_once(local):
    with local.open_tar("w.tar", "w") as tar:
        a, b = tar.open("a", "wb"), tar.open("b", "wb")
        a.write(b"A"), b.write(b"B")
        b.close(), a.close()
    tar = local.open_tar("w.tar")
    assert (tar.open("a", "rb").read(), tar.open("b", "rb").read()) == (b"A", b"B")


def test_exception_publishes_nothing(local, tmp_path):
    with pytest.raises(RuntimeError):
        with local.open_tar("w.tar", "w") as tar:
            with tar.open("x", "wb") as f:
                f.write(b"data")
            raise RuntimeError("boom")
    assert not (tmp_path / "w.tar").exists()


def test_exception_in_member_writer_leaves_it_out(local):
    with local.open_tar("w.tar", "w") as tar:
        with pytest.raises(RuntimeError):
            with tar.open("bad", "wb") as f:
                f.write(b"partial")
                raise RuntimeError("boom")
        with tar.open("good", "wb") as f:
            f.write(b"g")
        assert not tar.exists("bad")
    assert list(local.open_tar("w.tar").list()) == ["good"]


def test_reading_while_writing_is_unsupported(local):
    with local.open_tar("w.tar", "w") as tar:
        with tar.open("x", "wb") as f:
            f.write(b"1")
        with pytest.raises(io.UnsupportedOperation):
            tar.open("x", "rb")


def test_writing_an_existing_name_raises(local):
    with local.open_tar("w.tar", "w") as tar:
        with tar.open("x", "wb") as f:
            f.write(b"1")
        with pytest.raises(FileExistsError):
            tar.open("x", "wb")
        with pytest.raises(NotADirectoryError):
            tar.open("x/y", "wb")
        with tar.open("pending", "wb"), pytest.raises(FileExistsError):
            tar.open("pending", "wb")


def test_mkdir_checks(local):
    with local.open_tar("w.tar", "w") as tar:
        tar.mkdir("d")
        with pytest.raises(FileExistsError):
            tar.mkdir("d")
        with pytest.raises(FileNotFoundError):
            tar.mkdir("no/parent")


def test_archive_open_for_writing_cannot_be_pickled(local):
    with local.open_tar("w.tar", "w") as tar, pytest.raises(TypeError):
        pickle.dumps(tar)


class FailingFS(MemoryFS):
    """mem:// whose writers fail once they have been given more than 1 MB."""

    def _open_binary(self, path, mode, *args, **kwargs):
        f = super()._open_binary(path, mode, *args, **kwargs)
        if mode.kind != "r":
            write, given = f.write, [0]

            def failing_write(data):
                given[0] += len(data)
                if given[0] > 1 << 20:
                    raise OSError(errno.EIO, "disk on fire")
                return write(data)

            f.write = failing_write
        return f


def test_backing_write_failure_publishes_nothing(request):
    fs = FailingFS(f"tar-fail-{request.node.name}")
    tar = fs.open_tar("w.tar", "w")
    with pytest.raises(OSError, match="disk on fire"), tar.open("x", "wb") as f:
        f.write(BIG * 3)
    with pytest.raises(ArchiveError, match="w.tar.*not published.*'x'"):
        tar.close()
    assert not fs.exists("w.tar")


# -- through URLs, other filesystems and other archives ----------------------------------------

def test_tar_on_mem(request):
    store = f"tar-{request.node.name}"
    with pfio.from_url(f"mem://{store}").open_tar("a.tar", "w") as tar:
        with tar.open("x/y.txt", "w") as f:
            f.write("in memory")
    assert pfio.from_url(f"mem://{store}/a.tar").open("x/y.txt", "r").read() == "in memory"


@pytest.mark.parametrize("name", ["a.tar", "a.tar.gz", "a.tgz"])
def test_urls_open_the_archive(tmp_path, name):
    write(tmp_path, tar_bytes({"x/y.txt": b"via url"}, gz=name != "a.tar"), name)
    with pfio.from_url(str(tmp_path / name)) as tar:
        assert isinstance(tar, Tar) and list(tar.list()) == ["x/"]
    with pfio.open_url(str(tmp_path / name / "x" / "y.txt")) as f:
        assert f.read() == "via url"


def test_unknown_archive_mode_raises(local):
    with pytest.raises(ValueError):
        local.open_tar("a.tar", "a")


def test_missing_archive_raises_file_not_found(local):
    with pytest.raises(FileNotFoundError) as info:
        local.open_tar("nope.tar")
    assert info.value.errno in (errno.ENOENT, None)


def test_tar_in_streamed_tar_member(tmp_path, local):
    inner = tar_bytes({"deep.txt": b"deep"}, gz=False) + bytes(100_000)
    write(tmp_path, tar_bytes({"inner.tar": inner}))
    outer = local.open_tar("a.tar", whole_member_limit=1000)
    assert outer.open_tar("inner.tar").open("deep.txt", "rb").read() == b"deep"


def _zip_bytes(files):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return out.getvalue()


def test_zip_in_tar(tmp_path):
    write(tmp_path, tar_bytes({"in/b.zip": _zip_bytes({"f.txt": b"zip in tar"})}))
    with pfio.open_url(str(tmp_path / "a.tar" / "in" / "b.zip" / "f.txt"), "rb") as f:
        assert f.read() == b"zip in tar"


def test_tar_in_zip(tmp_path):
    (tmp_path / "a.zip").write_bytes(_zip_bytes({"t.tar": tar_bytes({"f.txt": b"tar in zip"})}))
    with pfio.open_url(str(tmp_path / "a.zip" / "t.tar" / "f.txt"), "rb") as f:
        assert f.read() == b"tar in zip"
