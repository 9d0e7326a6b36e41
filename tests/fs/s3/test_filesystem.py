"""S3 filesystem operations against a moto server over real HTTP."""

from __future__ import annotations

import errno
import io
import pickle

import pytest

import pfio
from pfio.fs.s3 import S3
from pfio.fs.stat import FileStat, with_implied_directories


@pytest.fixture
def fs(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket)


def put(fs: S3, path: str, data: bytes) -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


def test_write_then_read_bytes(fs: S3) -> None:
    put(fs, "a/b.bin", b"\x00\x01payload")
    with fs.open("a/b.bin", "rb") as f:
        assert f.read() == b"\x00\x01payload"


def test_text_mode_round_trip(fs: S3) -> None:
    with fs.open("t.txt", "w", encoding="utf-8") as f:
        f.write("héllo\nworld\n")
    with fs.open("t.txt", "r", encoding="utf-8") as f:
        assert f.readlines() == ["héllo\n", "world\n"]


def test_empty_object_round_trip(fs: S3) -> None:
    put(fs, "empty", b"")
    with fs.open("empty", "rb") as f:
        assert f.read() == b""
    assert fs.stat("empty").size == 0


def test_from_url_roots_at_prefix(fs: S3) -> None:
    put(fs, "pre/fix/x", b"data")
    sub = pfio.from_url(f"s3://{fs.bucket}/pre")
    assert isinstance(sub, S3)
    assert list(sub.list()) == ["fix/"]
    with sub.open("fix/x", "rb") as f:
        assert f.read() == b"data"


def test_endpoint_falls_back_to_aws_endpoint_url(monkeypatch: pytest.MonkeyPatch,
                                                 s3_env: str) -> None:
    monkeypatch.delenv("S3_ENDPOINT")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert S3("b").endpoint == "http://127.0.0.1:9"


def test_endpoint_option_wins_over_environment(s3_env: str) -> None:
    assert S3("b", endpoint="http://127.0.0.1:1").endpoint == "http://127.0.0.1:1"


def test_credentials_stay_out_of_repr(s3_env: str, s3_bucket: str) -> None:
    fs = S3(s3_bucket, aws_access_key_id="AKIDSECRETID", aws_secret_access_key="VERYSECRET")
    assert "AKIDSECRETID" not in repr(fs) and "VERYSECRET" not in repr(fs)


def test_credentials_stay_out_of_errors(s3_env: str, s3_bucket: str) -> None:
    fs = S3(s3_bucket, aws_access_key_id="AKIDSECRETID", aws_secret_access_key="VERYSECRET")
    with pytest.raises(OSError) as info:  # moto: not found; a real server: access denied
        fs.open("missing", "rb")
    assert "VERYSECRET" not in str(info.value) and "AKIDSECRETID" not in str(info.value)


def test_list_top_level_marks_directories(fs: S3) -> None:
    for name in ["a/1", "a/2", "b/c/3", "top"]:
        put(fs, name, b"x")
    assert sorted(fs.list()) == ["a/", "b/", "top"]


def test_list_recursive_names_the_keys(fs: S3) -> None:
    for name in ["a/1", "b/c/3", "top"]:
        put(fs, name, b"x")
    assert sorted(fs.list(recursive=True)) == ["a/1", "b/c/3", "top"]
    implied = with_implied_directories(fs.list(recursive=True, detail=True))
    assert sorted((st.filename, st.isdir()) for st in implied) == [
        ("a", True), ("a/1", False), ("b", True), ("b/c", True), ("b/c/3", False),
        ("top", False)]


def test_list_recursive_names_a_directory_marker_as_a_directory(fs: S3) -> None:
    for marker in ["m/", "m/n/"]:  # as other tools make "directories"
        fs.client.put_object(Bucket=fs.bucket, Key=marker, Body=b"")
    put(fs, "m/n/k", b"")
    assert sorted(fs.list("m", recursive=True)) == ["n/", "n/k"]


def test_list_detail_gives_filestats(fs: S3) -> None:
    put(fs, "d/f", b"12345")
    put(fs, "d/e/g", b"1")
    stats = {s.filename: s for s in fs.list("d", detail=True)}
    assert stats["f"].size == 5 and not stats["f"].isdir()
    assert stats["e"].isdir()


def test_list_missing_prefix_raises(fs: S3) -> None:
    with pytest.raises(FileNotFoundError, match="nothing"):
        list(fs.list("nothing"))


def test_list_of_an_empty_root_prefix_is_empty(fs: S3) -> None:
    assert list(S3(fs.bucket, "not-written-yet").list()) == []


def test_list_of_the_root_of_a_missing_bucket_raises(s3_env: str) -> None:
    with pytest.raises(FileNotFoundError):
        list(S3("pfio-no-such-bucket", "prefix").list())


def test_list_of_a_file_raises_not_a_directory(fs: S3) -> None:
    put(fs, "f", b"x")
    with pytest.raises(NotADirectoryError):
        list(fs.list("f"))


def test_list_pages_through_many_keys(fs: S3, s3_requests) -> None:
    for i in range(25):
        put(fs, f"many/{i:02d}", b"")
    fs.list_page_size = 10
    log = s3_requests(fs)
    assert list(fs.list("many")) == [f"{i:02d}" for i in range(25)]
    assert len(log) == 3


def test_stat_of_object(fs: S3) -> None:
    put(fs, "x/y", b"abc")
    st = fs.stat("x/y")
    assert isinstance(st, FileStat)
    assert (st.filename, st.size, st.isdir()) == ("x/y", 3, False)
    assert st.last_modified > 0 and st.etag


def test_stat_of_prefix_is_directory(fs: S3) -> None:
    put(fs, "x/y", b"abc")
    assert fs.stat("x").isdir()


def test_stat_missing_raises_with_url(fs: S3) -> None:
    with pytest.raises(FileNotFoundError, match=f"s3://{fs.bucket}/nope"):
        fs.stat("nope")


def test_isdir_and_exists(fs: S3) -> None:
    put(fs, "d/f", b"x")
    assert fs.isdir("d") and not fs.isdir("d/f") and not fs.isdir("zz")
    assert fs.exists("d") and fs.exists("d/f") and not fs.exists("zz")


def test_mkdir_and_makedirs_are_noops(fs: S3) -> None:
    fs.mkdir("new")
    fs.makedirs("new/deeper", exist_ok=False)
    assert not fs.exists("new")


def test_remove_object(fs: S3) -> None:
    put(fs, "f", b"x")
    fs.remove("f")
    assert not fs.exists("f")


def test_remove_missing_raises(fs: S3) -> None:
    with pytest.raises(FileNotFoundError):
        fs.remove("nothing")


def test_remove_missing_says_so_as_pfio2_did(fs: S3) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        fs.remove("nothing")
    assert str(raised.value) == "No such S3 object: 'nothing'"
    assert raised.value.errno == errno.ENOENT
    assert raised.value.filename == f"s3://{fs.bucket}/nothing"


def test_remove_prefix_needs_recursive(fs: S3) -> None:
    put(fs, "d/f", b"x")
    with pytest.raises(OSError, match="not empty"):
        fs.remove("d")


def test_remove_recursive_deletes_in_batches(fs: S3, s3_requests) -> None:
    for i in range(25):
        put(fs, f"d/{i}", b"")
    fs.delete_batch = 10
    log = s3_requests(fs)
    fs.remove("d", recursive=True)
    assert not fs.exists("d")
    assert sum(1 for r in log if r[0] == "POST") == 3  # 10 + 10 + 5 keys


def test_rename_moves_object(fs: S3) -> None:
    put(fs, "src", b"content")
    fs.rename("src", "dst/here")
    assert not fs.exists("src")
    with fs.open("dst/here", "rb") as f:
        assert f.read() == b"content"


def test_rename_missing_raises(fs: S3) -> None:
    with pytest.raises(FileNotFoundError):
        fs.rename("nothing", "x")


def test_rename_of_a_prefix_moves_every_key_below_it(fs: S3) -> None:
    for name, data in [("src/a", b"1"), ("src/d/b", b"22"), ("srcx", b"3")]:
        put(fs, name, data)
    fs.rename("src", "dst/moved")
    assert sorted(fs.list(recursive=True)) == ["dst/moved/a", "dst/moved/d/b", "srcx"]
    with fs.open("dst/moved/d/b", "rb") as f:
        assert f.read() == b"22"


def test_rename_of_a_prefix_onto_keys_is_refused(fs: S3) -> None:
    put(fs, "src/a", b"1")
    put(fs, "dst/b", b"2")
    with pytest.raises(OSError) as raised:
        fs.rename("src", "dst")
    assert raised.value.errno == errno.ENOTEMPTY
    assert sorted(fs.list(recursive=True)) == ["dst/b", "src/a"]


def test_rename_of_a_prefix_onto_an_object_is_refused(fs: S3) -> None:
    put(fs, "src/a", b"1")
    put(fs, "obj", b"2")
    with pytest.raises(NotADirectoryError):
        fs.rename("src", "obj")


def test_rename_of_a_prefix_into_itself_is_refused(fs: S3) -> None:
    put(fs, "src/a", b"1")
    with pytest.raises(OSError) as raised:
        fs.rename("src", "src/inner")
    assert raised.value.errno == errno.EINVAL
    assert list(fs.list(recursive=True)) == ["src/a"]


def test_rename_of_a_prefix_out_of_the_root_is_refused(fs: S3) -> None:
    put(fs, "top/src/a", b"1")
    sub = fs.subfs("top")
    with pytest.raises(PermissionError, match="'../../out'"):
        sub.rename("src", "../../out")
    assert sorted(fs.list(recursive=True)) == ["top/src/a"]


def test_a_failed_copy_of_a_prefix_leaves_it_whole(fs: S3, monkeypatch) -> None:
    for name in ["src/a", "src/b", "src/c"]:
        put(fs, name, b"x")
    copy = fs._copy

    def copy_two(skey: str, dkey: str, size: int, **options: object) -> None:
        if dkey.endswith("/c"):
            raise OSError(errno.EIO, "injected", dkey)
        copy(skey, dkey, size, **options)

    monkeypatch.setattr(fs, "_copy", copy_two)
    with pytest.raises(OSError, match="injected"):
        fs.rename("src", "dst")
    assert sorted(fs.list(recursive=True)) == ["src/a", "src/b", "src/c"]


def test_rename_above_copy_limit_uses_multipart_copy(fs: S3, s3_requests) -> None:
    data = bytes(range(256)) * (11 * 4096)  # 11 MiB
    put(fs, "big", data)
    fs.copy_limit = 5 << 20
    fs.copy_part_size = 5 << 20
    log = s3_requests(fs)
    fs.rename("big", "moved")
    assert sum(1 for r in log if r[0] == "PUT" and r[1].endswith("/moved")) == 3  # 3 parts
    with fs.open("moved", "rb") as f:
        assert f.read() == data


def test_glob_matches_within_components(fs: S3) -> None:
    for name in ["a/x.txt", "a/y.bin", "b/z.txt", "a/deep/w.txt"]:
        put(fs, name, b"")
    assert fs.glob("*/*.txt") == ["a/x.txt", "b/z.txt"]


def test_glob_double_star_spans_directories(fs: S3) -> None:
    for name in ["a/x.txt", "a/deep/w.txt", "c.txt"]:
        put(fs, name, b"")
    assert fs.glob("**/*.txt") == ["a/deep/w.txt", "a/x.txt", "c.txt"]
    assert fs.glob("a/**/w.txt") == ["a/deep/w.txt"]


def test_glob_without_magic_checks_existence(fs: S3) -> None:
    put(fs, "a/x", b"")
    assert fs.glob("a/x") == ["a/x"] and fs.glob("a/nope") == []


def test_subfs_is_rooted_below(fs: S3) -> None:
    put(fs, "p/q/r", b"1")
    sub = fs.subfs("p")
    assert list(sub.list()) == ["q/"]
    assert sub.stat("q/r").size == 1


def test_open_directory_raises(fs: S3) -> None:
    put(fs, "d/f", b"x")
    with pytest.raises(IsADirectoryError):
        fs.open("d", "rb")


def test_open_missing_raises_on_open_with_url(fs: S3) -> None:
    with pytest.raises(FileNotFoundError, match=f"s3://{fs.bucket}/no/such"):
        fs.open("no/such", "rb")


def test_missing_bucket_raises_file_not_found(s3_env: str) -> None:
    with pytest.raises(FileNotFoundError, match="NoSuchBucket"):
        S3("no-such-bucket-pfio").open("k", "rb")


def test_create_bucket_option(s3_env: str) -> None:
    fs = S3("pfio-created-bucket", create_bucket=True)
    put(fs, "k", b"v")
    assert fs.exists("k")


def test_exclusive_create_refuses_existing(fs: S3) -> None:
    put(fs, "f", b"x")
    with pytest.raises(FileExistsError):
        fs.open("f", "xb")


@pytest.mark.parametrize("mode", ["ab", "r+b", "a"])
def test_unsupported_modes(fs: S3, mode: str) -> None:
    with pytest.raises(io.UnsupportedOperation):
        fs.open("f", mode)


def test_fs_pickles_without_client(fs: S3) -> None:
    put(fs, "f", b"x")
    clone = pickle.loads(pickle.dumps(fs))
    assert clone.connection._executor is None  # threads and engines are per process
    assert clone.stat("f").size == 1


def test_close_then_reuse_recreates_client(fs: S3) -> None:
    put(fs, "f", b"x")
    fs.close()
    fs.close()
    assert fs.exists("f")


def test_closing_a_subfs_leaves_the_parent_usable(s3_env: str, s3_bucket: str) -> None:
    fs = S3(s3_bucket, buffering=256 << 10)  # reads of 2 blocks or more use the thread pool
    put(fs, "d/big", b"x" * (3 << 20))
    sub = fs.subfs("d")
    with sub.open("big", "rb") as f:
        assert len(f.read()) == 3 << 20
    sub.close()
    with fs.open("d/big", "rb") as f:
        assert len(f.read()) == 3 << 20


def test_missing_bucket_is_neither_dir_nor_existing(s3_env: str) -> None:
    fs = S3("pfio-no-bucket-at-all")
    assert not fs.isdir("") and not fs.exists("x")
