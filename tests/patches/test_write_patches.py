"""``os`` removals, directories and renames on URLs (``os.remove``/``unlink``, ``rmdir``,
``mkdir``, ``makedirs``, ``rename``/``replace``, ``os.path.samefile``), on ``mem://`` and
S3 (moto server), with the errors of ``os``; local paths as if unpatched."""

import errno
import io
import os

import cv2
import numpy as np
import pytest

import pfio
from pfio.patches import patch_all, unpatch_all


def _put(fs, name, text="x"):
    with fs.open(name, "w") as f:
        f.write(text)


@pytest.fixture
def tree(remote):
    """``out/a.txt``, ``out/sub/b.txt`` under the remote directory; ``os`` patched."""
    url, fs = remote
    _put(fs, "out/a.txt", "a")
    _put(fs, "out/sub/b.txt", "b")
    patch_all(["os", "os.path"])
    return url, fs


def test_remove_deletes_a_remote_file(tree):
    url, fs = tree
    os.remove(f"{url}/out/a.txt")
    assert not fs.exists("out/a.txt")
    assert fs.exists("out/sub/b.txt")


def test_unlink_deletes_a_remote_file(tree):
    url, fs = tree
    os.unlink(f"{url}/out/sub/b.txt")
    assert not fs.exists("out/sub/b.txt")


def test_remove_of_a_missing_url_raises_file_not_found(tree):
    url, _ = tree
    with pytest.raises(FileNotFoundError):
        os.remove(f"{url}/out/missing.txt")


def test_remove_of_a_directory_raises_is_a_directory(tree):
    url, fs = tree
    with pytest.raises(IsADirectoryError):
        os.remove(f"{url}/out/sub")
    assert fs.exists("out/sub/b.txt")


def test_rmdir_of_a_non_empty_directory_raises_enotempty(tree):
    url, fs = tree
    with pytest.raises(OSError) as info:
        os.rmdir(f"{url}/out/sub")
    assert info.value.errno == errno.ENOTEMPTY
    assert fs.exists("out/sub/b.txt")


def test_rmdir_of_a_file_raises_not_a_directory(tree):
    url, fs = tree
    with pytest.raises(NotADirectoryError):
        os.rmdir(f"{url}/out/a.txt")
    assert fs.exists("out/a.txt")


def test_rmdir_of_a_missing_url_raises_file_not_found(tree):
    url, _ = tree
    with pytest.raises(FileNotFoundError):
        os.rmdir(f"{url}/nowhere")


def test_mkdir_and_rmdir_of_an_empty_directory():
    patch_all("os")
    with pfio.from_url("mem://write-mkdir") as fs:
        _put(fs, "keep.txt")
        os.mkdir("mem://write-mkdir/empty")
        assert fs.isdir("empty")
        os.rmdir("mem://write-mkdir/empty")
        assert not fs.exists("empty")


def test_mkdir_of_an_existing_path_raises_file_exists(tree):
    url, _ = tree
    for existing in ("out", "out/a.txt"):
        with pytest.raises(FileExistsError):
            os.mkdir(f"{url}/{existing}")


def test_mkdir_without_its_parent_raises_file_not_found():
    patch_all("os")
    with pfio.from_url("mem://write-mkdir-parent") as fs:
        _put(fs, "keep.txt")
        with pytest.raises(FileNotFoundError):
            os.mkdir("mem://write-mkdir-parent/no/child")


def test_makedirs_makes_the_missing_parents():
    patch_all(["os", "os.path"])
    with pfio.from_url("mem://write-makedirs") as fs:
        _put(fs, "keep.txt")
        os.makedirs("mem://write-makedirs/a/b/c")
        assert os.path.isdir("mem://write-makedirs/a/b/c") and fs.isdir("a/b")


def test_makedirs_then_writing_on_s3(s3_env, s3_bucket):
    patch_all(["os", "os.path", "builtins"])
    out = f"s3://{s3_bucket}/run/checkpoints"
    os.makedirs(out, exist_ok=True)  # S3 has no directories: nothing to make
    with open(f"{out}/step1.txt", "w") as f:
        f.write("1")
    assert os.path.isdir(out) and os.listdir(out) == ["step1.txt"]


def test_makedirs_of_an_existing_directory_needs_exist_ok(tree):
    url, _ = tree
    with pytest.raises(FileExistsError):
        os.makedirs(f"{url}/out/sub")
    os.makedirs(f"{url}/out/sub", exist_ok=True)


def test_makedirs_over_a_file_raises_file_exists_even_with_exist_ok(tree):
    url, _ = tree
    with pytest.raises(FileExistsError):
        os.makedirs(f"{url}/out/a.txt", exist_ok=True)


def test_rename_moves_a_file(tree):
    url, fs = tree
    os.rename(f"{url}/out/a.txt", f"{url}/out/sub/renamed.txt")
    assert not fs.exists("out/a.txt")
    with fs.open("out/sub/renamed.txt") as f:
        assert f.read() == "a"


def test_replace_overwrites_an_existing_file(tree):
    url, fs = tree
    os.replace(f"{url}/out/a.txt", f"{url}/out/sub/b.txt")
    with fs.open("out/sub/b.txt") as f:
        assert f.read() == "a"
    assert not fs.exists("out/a.txt")


def test_rename_moves_a_directory(tree):
    url, fs = tree
    os.rename(f"{url}/out/sub", f"{url}/moved")
    assert sorted(fs.list("moved")) == ["b.txt"]
    assert not fs.exists("out/sub")


def test_rename_of_a_missing_source_raises_file_not_found(tree):
    url, _ = tree
    with pytest.raises(FileNotFoundError):
        os.rename(f"{url}/out/none.txt", f"{url}/out/x.txt")


def test_rename_of_a_file_onto_a_directory_raises_is_a_directory(tree):
    url, fs = tree
    with pytest.raises(IsADirectoryError):
        os.rename(f"{url}/out/a.txt", f"{url}/out/sub")
    assert fs.exists("out/a.txt")


def test_rename_between_a_url_and_a_local_path_raises_exdev(tree, tmp_path):
    url, fs = tree
    (tmp_path / "local.txt").write_text("l")
    for src, dst in ((f"{url}/out/a.txt", str(tmp_path / "x.txt")),
                     (str(tmp_path / "local.txt"), f"{url}/out/x.txt")):
        with pytest.raises(OSError) as info:
            os.rename(src, dst)
        assert info.value.errno == errno.EXDEV
    assert fs.exists("out/a.txt") and (tmp_path / "local.txt").exists()
    assert not (tmp_path / "x.txt").exists() and not fs.exists("out/x.txt")


def test_rename_between_two_filesystems_raises_exdev(tree):
    url, fs = tree
    with pytest.raises(OSError) as info:
        os.replace(f"{url}/out/a.txt", "mem://write-other-store/a.txt")
    assert info.value.errno == errno.EXDEV
    assert fs.exists("out/a.txt")


def test_samefile_compares_remote_paths(tree):
    url, _ = tree
    assert os.path.samefile(f"{url}/out/a.txt", f"{url}/out/./sub/../a.txt")
    assert not os.path.samefile(f"{url}/out/a.txt", f"{url}/out/sub/b.txt")
    with pytest.raises(FileNotFoundError):
        os.path.samefile(f"{url}/out/a.txt", f"{url}/out/none.txt")


def test_samefile_of_a_url_and_a_local_path_is_false(tree, tmp_path):
    url, _ = tree
    (tmp_path / "a.txt").write_text("a")
    assert not os.path.samefile(str(tmp_path / "a.txt"), f"{url}/out/a.txt")


def test_archive_members_are_read_only(remote):
    url, fs = remote
    with fs.open_zip("data.zip", "w") as archive, archive.open("m.txt", "w") as f:
        f.write("m")
    patch_all("os")
    with pytest.raises(io.UnsupportedOperation):
        os.remove(f"{url}/data.zip/m.txt")
    os.remove(f"{url}/data.zip")  # the archive itself is a file
    assert not fs.exists("data.zip")


def test_file_urls_reach_the_original_functions(tmp_path):
    root = tmp_path / "files"
    root.mkdir()
    patch_all("os")
    os.makedirs(f"file://{root}/d/e")
    (root / "d" / "e" / "f.txt").write_text("f")
    os.rename(f"file://{root}/d/e/f.txt", str(root / "g.txt"))
    os.remove(f"file://{root}/g.txt")
    os.rmdir(f"file://{root}/d/e")
    assert os.listdir(root) == ["d"]


def _local_session(root):
    """Local file work with its failures: what ``os`` answers, paths made relative."""
    outcome = []

    def step(call, *args, **kwargs):
        try:
            call(*args, **kwargs)
            outcome.append((call.__name__, "ok"))
        except OSError as exc:
            outcome.append((call.__name__, type(exc).__name__, exc.errno))

    os.makedirs(root / "a" / "b")
    step(os.makedirs, root / "a" / "b")
    step(os.makedirs, str(root / "a" / "b"), exist_ok=True)
    step(os.mkdir, str(root / "a"))
    (root / "a" / "f.txt").write_text("f")
    step(os.rename, str(root / "a" / "f.txt"), str(root / "a" / "g.txt"))
    step(os.replace, root / "a" / "g.txt", root / "h.txt")
    step(os.remove, str(root / "a"))
    step(os.rmdir, str(root / "a"))
    step(os.unlink, str(root / "missing"))
    step(os.rmdir, str(root / "a" / "b"))
    outcome.append(sorted(os.listdir(root)))
    outcome.append(os.path.samefile(root / "h.txt", str(root / "h.txt")))
    return outcome


def test_local_paths_behave_as_unpatched(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "patched").mkdir()
    expected = _local_session(tmp_path / "plain")
    patch_all(["os", "os.path"])
    assert _local_session(tmp_path / "patched") == expected


def test_unpatch_restores_the_original_functions():
    originals = [os.remove, os.unlink, os.rmdir, os.mkdir, os.makedirs, os.rename,
                 os.replace, os.path.samefile]
    patch_all("os")
    assert os.remove is not originals[0] and os.path.samefile is not originals[-1]
    unpatch_all("os")
    assert [os.remove, os.unlink, os.rmdir, os.mkdir, os.makedirs, os.rename, os.replace,
            os.path.samefile] == originals


def _image(value):
    return np.full((4, 4, 3), value, np.uint8)


def test_a_spooled_read_after_remove_sees_the_file_gone(remote):
    url, _ = remote
    patch_all(["os", "cv2"])
    assert cv2.imwrite(f"{url}/a.png", _image(10))
    assert cv2.imread(f"{url}/a.png") is not None  # now in the object cache
    os.remove(f"{url}/a.png")
    assert cv2.imread(f"{url}/a.png") is None


def test_a_spooled_read_after_replace_sees_the_moved_file(remote):
    url, _ = remote
    patch_all(["os", "cv2"])
    assert cv2.imwrite(f"{url}/a.png", _image(10)) and cv2.imwrite(f"{url}/b.png", _image(90))
    assert cv2.imread(f"{url}/a.png") is not None and cv2.imread(f"{url}/b.png") is not None
    os.replace(f"{url}/a.png", f"{url}/b.png")
    np.testing.assert_array_equal(cv2.imread(f"{url}/b.png"), _image(10))
    assert cv2.imread(f"{url}/a.png") is None


def test_a_spooled_read_after_a_directory_rename_sees_it_gone(remote):
    url, _ = remote
    patch_all(["os", "cv2"])
    assert cv2.imwrite(f"{url}/d/a.png", _image(10))
    assert cv2.imread(f"{url}/d/a.png") is not None
    os.rename(f"{url}/d", f"{url}/e")
    assert cv2.imread(f"{url}/d/a.png") is None
    np.testing.assert_array_equal(cv2.imread(f"{url}/e/a.png"), _image(10))
