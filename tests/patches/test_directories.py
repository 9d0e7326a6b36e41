"""Directory APIs on URLs: ``os.listdir``, ``os.scandir``, ``os.walk``, ``glob``, ``os.stat``
and ``os.path``, on ``mem://`` and S3 (moto server), inside zips and at roots."""

import glob
import os
import stat

import pytest

import pfio
from pfio.patches import patch_all


def _tree(fs):
    """``train/{a,b}/{0,1}.txt``, ``train/.hidden`` and ``shard.zip`` holding the same
    class folders."""
    for cls in ("a", "b"):
        for i in (0, 1):
            with fs.open(f"train/{cls}/{i}.txt", "w") as f:
                f.write(cls * (i + 1))
    with fs.open("train/.hidden", "w") as f:
        f.write("h")
    with fs.open_zip("shard.zip", "w") as archive:
        for cls in ("a", "b"):
            with archive.open(f"{cls}/0.txt", "w") as f:
                f.write(cls)


@pytest.fixture
def tree(remote):
    url, fs = remote
    _tree(fs)
    patch_all(["os", "os.path", "glob"])
    return url


def test_listdir_lists_a_remote_directory(tree):
    assert sorted(os.listdir(f"{tree}/train")) == [".hidden", "a", "b"]
    assert sorted(os.listdir(f"{tree}/train/a/")) == ["0.txt", "1.txt"]


def test_listdir_lists_a_directory_inside_a_zip(tree):
    assert sorted(os.listdir(f"{tree}/shard.zip")) == ["a", "b"]
    assert os.listdir(f"{tree}/shard.zip/a/") == ["0.txt"]


def test_scandir_entries_join_back_into_urls(tree):
    with os.scandir(f"{tree}/train") as entries:
        found = {e.name: e for e in entries}
    assert sorted(found) == [".hidden", "a", "b"]
    assert found["a"].path == f"{tree}/train/a"
    assert os.fspath(found["a"]) == f"{tree}/train/a"
    assert found["a"].is_dir() and not found["a"].is_file()
    assert found[".hidden"].is_file() and not found[".hidden"].is_symlink()
    assert stat.S_ISDIR(found["a"].stat().st_mode)


def test_scandir_entry_stat_has_size_and_mtime(tree):
    entry = next(e for e in os.scandir(f"{tree}/train/b") if e.name == "1.txt")
    st = entry.stat()
    assert stat.S_ISREG(st.st_mode) and st.st_size == 2
    assert st.st_mtime > 0


def test_scandir_inside_a_zip(tree):
    entries = sorted(os.scandir(f"{tree}/shard.zip"), key=lambda e: e.name)
    assert [(e.name, e.path, e.is_dir()) for e in entries] == [
        ("a", f"{tree}/shard.zip/a", True), ("b", f"{tree}/shard.zip/b", True)]


def test_walk_yields_urls(tree):
    walked = {top: (sorted(dirs), sorted(files)) for top, dirs, files in os.walk(f"{tree}/train")}
    assert walked == {f"{tree}/train": (["a", "b"], [".hidden"]),
                      f"{tree}/train/a": ([], ["0.txt", "1.txt"]),
                      f"{tree}/train/b": ([], ["0.txt", "1.txt"])}


def test_walk_bottom_up(tree):
    tops = [top for top, _, _ in os.walk(f"{tree}/train", topdown=False)]
    assert sorted(tops[:2]) == [f"{tree}/train/a", f"{tree}/train/b"]
    assert tops[2] == f"{tree}/train"


def test_walk_inside_a_zip(tree):
    walked = {top: files for top, _, files in os.walk(f"{tree}/shard.zip")}
    assert walked == {f"{tree}/shard.zip": [], f"{tree}/shard.zip/a": ["0.txt"],
                      f"{tree}/shard.zip/b": ["0.txt"]}


def test_glob_matches_urls(tree):
    assert glob.glob(f"{tree}/train/*/*.txt") == [
        f"{tree}/train/{c}/{i}.txt" for c in "ab" for i in (0, 1)]
    assert list(glob.iglob(f"{tree}/train/a/1.*")) == [f"{tree}/train/a/1.txt"]


def test_glob_double_star_needs_recursive(tree):
    assert glob.glob(f"{tree}/**/0.txt") == []  # ** is * without recursive=True
    assert glob.glob(f"{tree}/**/0.txt", recursive=True) == [
        f"{tree}/train/a/0.txt", f"{tree}/train/b/0.txt"]


def test_glob_skips_hidden_names_unless_asked(tree):
    assert glob.glob(f"{tree}/train/*") == [f"{tree}/train/a", f"{tree}/train/b"]
    assert glob.glob(f"{tree}/train/*", include_hidden=True) == [
        f"{tree}/train/.hidden", f"{tree}/train/a", f"{tree}/train/b"]
    assert glob.glob(f"{tree}/train/.h*") == [f"{tree}/train/.hidden"]


def test_glob_inside_a_zip_and_with_a_remote_root_dir(tree):
    assert glob.glob(f"{tree}/shard.zip/*/*.txt") == [
        f"{tree}/shard.zip/a/0.txt", f"{tree}/shard.zip/b/0.txt"]
    assert sorted(glob.glob("*/1.txt", root_dir=f"{tree}/train")) == ["a/1.txt", "b/1.txt"]


def test_glob_with_a_trailing_slash_matches_directories(tree):
    assert glob.glob(f"{tree}/train/*/") == [f"{tree}/train/a/", f"{tree}/train/b/"]


def test_glob_without_wildcards_checks_existence(tree):
    assert glob.glob(f"{tree}/train/a/0.txt") == [f"{tree}/train/a/0.txt"]
    assert glob.glob(f"{tree}/train/a/9.txt") == []
    assert glob.glob(f"{tree}/nowhere/*") == []
    assert glob.glob(f"{tree}/missing.zip/*") == []


def test_os_stat_and_getmtime_of_a_remote_file(tree):
    st = os.stat(f"{tree}/train/b/1.txt")
    assert stat.S_ISREG(st.st_mode) and st.st_size == 2
    assert os.path.getmtime(f"{tree}/train/b/1.txt") == st.st_mtime > 0
    assert stat.S_ISDIR(os.stat(f"{tree}/train").st_mode)


def test_getmtime_of_a_missing_url_raises(tree):
    with pytest.raises(FileNotFoundError):
        os.path.getmtime(f"{tree}/train/a/9.txt")


def test_os_path_inside_a_zip_directory(tree):
    assert os.path.isdir(f"{tree}/shard.zip/a/")
    assert os.path.isfile(f"{tree}/shard.zip/a/0.txt")
    assert os.path.getsize(f"{tree}/shard.zip/b/0.txt") == 1


def test_missing_directory_raises_as_os_does(tree):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        os.listdir(f"{tree}/nowhere")
    with pytest.raises(FileNotFoundError):
        os.scandir(f"{tree}/nowhere")
    with pytest.raises(FileNotFoundError):
        os.stat(f"{tree}/nowhere")
    assert list(os.walk(f"{tree}/nowhere")) == []


def test_listing_a_file_raises_not_a_directory(tree):
    with pytest.raises(NotADirectoryError, match="0.txt"):
        os.listdir(f"{tree}/train/a/0.txt")


def test_a_bucket_root_is_a_directory(s3_env, s3_bucket):
    with pfio.from_url(f"s3://{s3_bucket}") as fs, fs.open("top.txt", "w") as f:
        f.write("t")
    patch_all(["os", "os.path"])
    for root in (f"s3://{s3_bucket}", f"s3://{s3_bucket}/"):
        assert os.path.isdir(root) and os.path.exists(root) and not os.path.isfile(root)
        assert os.listdir(root) == ["top.txt"]
    assert [e.path for e in os.scandir(f"s3://{s3_bucket}")] == [f"s3://{s3_bucket}/top.txt"]
    assert not os.path.isdir(f"s3://{s3_bucket}-missing")


def test_a_mem_store_is_a_directory():
    with pfio.from_url("mem://patches-store") as fs, fs.open("x.txt", "w") as f:
        f.write("x")
    patch_all("os.path")
    assert os.path.isdir("mem://patches-store")
    assert os.path.isfile("mem://patches-store/x.txt")
    assert not os.path.exists("s3:")  # what the old split made of a root


def test_local_paths_reach_the_originals(tmp_path):
    tmp_path = tmp_path / "local"
    tmp_path.mkdir()
    (tmp_path / "d").mkdir()
    (tmp_path / "f.txt").write_text("f")
    patch_all(["os", "os.path", "glob"])
    assert sorted(os.listdir(tmp_path)) == ["d", "f.txt"]
    assert sorted(os.listdir(str(tmp_path))) == ["d", "f.txt"]
    entries = list(os.scandir(tmp_path))
    assert all(type(e) is os.DirEntry for e in entries)
    assert os.stat(tmp_path / "f.txt").st_size == 1
    assert glob.glob(str(tmp_path / "*.txt")) == [str(tmp_path / "f.txt")]
    assert [top for top, _, _ in os.walk(tmp_path)] == [str(tmp_path), str(tmp_path / "d")]
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert sorted(os.listdir(fd)) == ["d", "f.txt"]
    finally:
        os.close(fd)
