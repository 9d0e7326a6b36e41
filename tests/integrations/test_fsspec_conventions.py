"""fsspec conventions of ``PfioFileSystem`` beyond the abstract suite: directories at every
level, ``auto_mkdir``, recursive removal, info fields, ETag keys, codecs and ranged reads."""

from __future__ import annotations

import gzip
import secrets
import zipfile
from pathlib import PurePosixPath

import pytest

pytest.importorskip("fsspec")

import pfio  # noqa: E402
from pfio.integrations.fsspec import PfioFileSystem  # noqa: E402


@pytest.fixture
def mem() -> str:
    """A fresh mem:// store, as an fsspec path."""
    return f"mem/conventions-{secrets.token_hex(6)}"


@pytest.fixture
def s3(s3_env: str, s3_bucket: str) -> str:
    """A fresh bucket, as an fsspec path without the protocol."""
    return f"s3/{s3_bucket}"


# -- directories ----------------------------------------------------------------------------

def test_makedirs_creates_every_level_in_memory(bridge, mem):
    bridge.makedirs(f"pfio://{mem}/a/b/c")
    assert pfio.from_url(f"mem://{mem[4:]}").isdir("a/b/c")


def test_mkdir_with_parents_creates_every_level_of_a_missing_local_folder(bridge, tmp_path):
    bridge.mkdir(f"pfio://file{tmp_path}/x/y/z", create_parents=True)
    assert (tmp_path / "x/y/z").is_dir()


def test_mkdir_without_parents_needs_the_parent(bridge, tmp_path):
    with pytest.raises(FileNotFoundError):
        bridge.mkdir(f"file{tmp_path}/missing/child", create_parents=False)


def test_auto_mkdir_writes_into_a_missing_local_folder(tmp_path):
    PfioFileSystem(auto_mkdir=True, skip_instance_cache=True).pipe_file(
        f"file{tmp_path}/new/deep/f.bin", b"data")
    assert (tmp_path / "new/deep/f.bin").read_bytes() == b"data"


def test_without_auto_mkdir_a_missing_local_folder_is_an_error(bridge, tmp_path):
    with pytest.raises(FileNotFoundError):
        bridge.pipe_file(f"file{tmp_path}/new/f.bin", b"data")
    assert not (tmp_path / "new").exists()


# -- removing and moving --------------------------------------------------------------------

def test_recursive_rm_on_s3_removes_every_object(bridge, s3):
    for name in ("a/1", "a/2", "a/b/3", "a/b/c/4", "a/d/5", "keep"):
        bridge.pipe_file(f"{s3}/{name}", b"x")
    bridge.rm(f"{s3}/a", recursive=True)
    assert bridge.find(s3) == [f"{s3}/keep"]


def test_rm_of_a_glob_with_recursive_skips_what_went_with_its_directory(bridge, mem):
    for name in ("d1/x", "d1/sub/y", "d2/z", "f"):
        bridge.pipe_file(f"{mem}/{name}", b"x")
    bridge.rm(f"{mem}/d*", recursive=True)
    assert bridge.ls(mem, detail=False) == [f"{mem}/f"]


def test_rm_of_a_missing_path_raises(bridge, s3):
    with pytest.raises(FileNotFoundError):
        bridge.rm(f"{s3}/missing", recursive=True)


def test_rm_non_recursive_of_a_full_directory_raises(bridge, mem):
    bridge.pipe_file(f"{mem}/d/x", b"x")
    with pytest.raises(OSError, match="not empty"):
        bridge.rm(f"{mem}/d")
    assert bridge.exists(f"{mem}/d/x")


def test_mv_of_an_s3_file_is_a_server_side_rename(bridge, s3, s3_requests):
    bridge.pipe_file(f"{s3}/a/f", b"payload")
    log = s3_requests(pfio.from_url(f"s3://{s3[3:]}"))
    bridge.mv(f"{s3}/a/f", f"{s3}/b/g")
    assert bridge.cat_file(f"{s3}/b/g") == b"payload"
    assert not bridge.exists(f"{s3}/a/f")
    assert not any(method == "GET" and "/a/f" in path for method, path, _ in log)


def test_mv_of_an_s3_folder_copies_and_removes(bridge, s3):
    bridge.pipe({f"{s3}/src/x": b"1", f"{s3}/src/sub/y": b"2"})
    bridge.mv(f"{s3}/src", f"{s3}/dst", recursive=True)
    assert bridge.find(s3) == [f"{s3}/dst/sub/y", f"{s3}/dst/x"]


def test_cp_file_between_folders(bridge, mem):
    bridge.pipe_file(f"{mem}/a/f", b"payload")
    bridge.cp_file(f"{mem}/a/f", f"{mem}/b/f")
    assert bridge.cat_file(f"{mem}/b/f") == b"payload"
    assert bridge.cat_file(f"{mem}/a/f") == b"payload"


def test_mv_of_a_glob_moves_every_match(bridge, mem):
    bridge.pipe({f"{mem}/src/a.txt": b"1", f"{mem}/src/b.txt": b"2", f"{mem}/src/c.bin": b"3"})
    bridge.mv(f"{mem}/src/*.txt", f"{mem}/dst")
    assert bridge.find(mem) == [f"{mem}/dst/a.txt", f"{mem}/dst/b.txt", f"{mem}/src/c.bin"]


def test_mv_across_backends_copies_then_removes(bridge, mem, s3):
    bridge.pipe({f"{mem}/src/x": b"1", f"{mem}/src/sub/y": b"2"})
    bridge.mv(f"{mem}/src", f"{s3}/dst", recursive=True)
    assert bridge.find(s3) == [f"{s3}/dst/sub/y", f"{s3}/dst/x"]
    assert bridge.cat_file(f"{s3}/dst/sub/y") == b"2"
    assert not bridge.exists(f"{mem}/src")


# -- info, ETags ----------------------------------------------------------------------------

def test_info_and_ls_detail_fields_on_s3(bridge, s3):
    bridge.pipe_file(f"{s3}/d/f.bin", b"12345")
    info = bridge.info(f"pfio://{s3}/d/f.bin")
    assert {k: info[k] for k in ("name", "size", "type")} == {
        "name": f"{s3}/d/f.bin", "size": 5, "type": "file"}
    assert isinstance(info["mtime"], float)
    assert info["ETag"]
    listed = bridge.ls(f"{s3}", detail=True)
    assert [(e["name"], e["type"]) for e in listed] == [(f"{s3}/d", "directory")]
    assert bridge.ls(f"{s3}/d", detail=True) == [info]


def test_info_and_ls_of_a_missing_path_raise(bridge, s3):
    with pytest.raises(FileNotFoundError):
        bridge.info(f"{s3}/missing")
    with pytest.raises(FileNotFoundError):
        bridge.ls(f"{s3}/missing")


def test_paths_may_come_as_lists_and_path_objects(bridge, mem):
    bridge.pipe_file(PurePosixPath(f"{mem}/a"), b"1")
    bridge.pipe_file(f"pfio://{mem}/b", b"2")
    assert bridge._strip_protocol([f"pfio://{mem}/a/", PurePosixPath(f"{mem}/b")]) == [
        f"{mem}/a", f"{mem}/b"]
    assert bridge.cat([f"pfio://{mem}/a", f"{mem}/b"]) == {f"{mem}/a": b"1", f"{mem}/b": b"2"}


def test_ukey_and_checksum_follow_the_etag(bridge, s3):
    path = f"{s3}/f"
    bridge.pipe_file(path, b"one")
    first_key, first_sum = bridge.ukey(path), bridge.checksum(path)
    assert first_key == bridge.info(path)["ETag"]
    assert bridge.ukey(path) == first_key and bridge.checksum(path) == first_sum
    bridge.pipe_file(path, b"two")
    assert bridge.ukey(path) != first_key
    assert bridge.checksum(path) != first_sum


def test_ukey_without_etag_changes_with_the_file(bridge, tmp_path):
    path = f"file{tmp_path}/f"
    bridge.pipe_file(path, b"one")
    first = bridge.ukey(path)
    bridge.pipe_file(path, b"three")
    assert bridge.ukey(path) != first


def test_modified_is_a_utc_datetime(bridge, mem):
    bridge.pipe_file(f"{mem}/f", b"x")
    modified = bridge.modified(f"{mem}/f")
    assert modified.tzinfo is not None
    assert modified.timestamp() == pytest.approx(bridge.info(f"{mem}/f")["mtime"], abs=1e-5)


def test_modified_of_an_s3_prefix_is_not_known(bridge, s3):
    bridge.pipe_file(f"{s3}/d/f", b"x")
    with pytest.raises(NotImplementedError, match="no modification time"):
        bridge.modified(f"{s3}/d")


# -- containers -----------------------------------------------------------------------------

def test_zip_members_are_files_under_the_archive_path(bridge, tmp_path):
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        z.writestr("d/m.txt", b"0123456789")
    archive = f"file{tmp_path}/a.zip"
    assert bridge.info(archive)["type"] == "file"
    assert bridge.ls(f"{archive}/d", detail=False) == [f"{archive}/d/m.txt"]
    assert bridge.cat_file(f"{archive}/d/m.txt", 2, 5) == b"234"
    assert bridge.isdir(f"{archive}/d") and not bridge.exists(f"{archive}/nope")


# -- codecs and ranged reads ------------------------------------------------------------------

def test_open_with_compression_infer_uses_pfios_codecs(bridge, s3):
    path = f"{s3}/logs/day1.jsonl.gz"
    with bridge.open(path, "wt", compression="infer") as f:
        f.write('{"a": 1}\n')
    stored = bridge.cat_file(path)
    assert gzip.decompress(stored) == b'{"a": 1}\n'
    with bridge.open(path, "rt", compression="infer") as f:
        assert f.read() == '{"a": 1}\n'


def test_compression_infer_reads_by_magic_bytes_whatever_the_name(bridge, mem):
    bridge.pipe_file(f"{mem}/blob", gzip.compress(b"hidden gzip"))
    with bridge.open(f"{mem}/blob", "rb", compression="infer") as f:
        assert f.read() == b"hidden gzip"


def test_open_with_an_unknown_codec_raises(bridge, mem):
    with pytest.raises(ValueError, match="gzip"):
        bridge.open(f"{mem}/f.sz", "wb", compression="snappy-nope")


def test_cat_file_range_is_one_small_ranged_read_after_a_probe(bridge, s3, s3_requests):
    data = bytes(range(256)) * 64
    bridge.pipe_file(f"{s3}/blob", data)
    log = s3_requests(pfio.from_url(f"s3://{s3[3:]}"))
    assert bridge.cat_file(f"{s3}/blob", 1000, 1100) == data[1000:1100]
    ranges = [rng for method, _, rng in log if method == "GET"]
    assert ranges == ["bytes=0-0", "bytes=1000-1099"]


def test_cat_file_of_the_tail_is_one_request(bridge, s3, s3_requests):
    data = bytes(range(256)) * 64
    bridge.pipe_file(f"{s3}/blob", data)
    log = s3_requests(pfio.from_url(f"s3://{s3[3:]}"))
    assert bridge.cat_file(f"{s3}/blob", -8) == data[-8:]
    assert [rng for method, _, rng in log if method == "GET"] == ["bytes=-8"]


@pytest.mark.parametrize(("start", "end"), [(10, None), (-20, -10), (5, -5), (None, 7)])
def test_cat_file_ranges_match_python_slices(bridge, mem, start, end):
    data = bytes(range(100))
    bridge.pipe_file(f"{mem}/f", data)
    assert bridge.cat_file(f"{mem}/f", start, end) == data[start:end]


def test_pipe_file_create_mode_refuses_to_overwrite(bridge, s3):
    bridge.pipe_file(f"{s3}/f", b"one")
    with pytest.raises(FileExistsError):
        bridge.pipe_file(f"{s3}/f", b"two", mode="create")
    assert bridge.cat_file(f"{s3}/f") == b"one"


def test_storage_options_reach_the_backend(s3_env, s3_bucket, monkeypatch):
    monkeypatch.delenv("S3_ENDPOINT")
    bridge = PfioFileSystem(endpoint=s3_env, skip_instance_cache=True)
    bridge.pipe_file(f"s3/{s3_bucket}/f", b"via options")
    assert bridge.cat_file(f"s3/{s3_bucket}/f") == b"via options"
