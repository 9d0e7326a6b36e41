"""``shutil`` on URLs: ``copyfile``, ``copy``, ``copy2``, ``copytree``, ``rmtree``, ``move``
between URLs, from URLs to local paths and back, on ``mem://`` and S3 (moto server)."""

import errno
import os
import shutil
import stat

import pytest

import pfio
from pfio.patches import active_patches, patch_all, patched, unpatch_all


def _put(fs, name, text):
    with fs.open(name, "w") as f:
        f.write(text)


def _read(fs, name):
    with fs.open(name) as f:
        return f.read()


@pytest.fixture
def tree(remote):
    """``src/a.txt``, ``src/sub/b.txt`` under the remote directory; ``shutil`` patched."""
    url, fs = remote
    _put(fs, "src/a.txt", "a")
    _put(fs, "src/sub/b.txt", "b")
    patch_all("shutil")
    return url, fs


@pytest.fixture
def local(tmp_path):
    """A local directory with ``l.txt`` and ``ld/m.txt``."""
    root = tmp_path / "local"
    (root / "ld").mkdir(parents=True)
    (root / "l.txt").write_text("l")
    (root / "ld" / "m.txt").write_text("m")
    return root


def test_shutil_brings_the_patches_it_works_through():
    assert patch_all("shutil") == ["builtins", "os", "os.path", "shutil"]
    assert unpatch_all("shutil") == ["builtins", "os", "os.path"]


def test_patched_shutil_block_removes_what_it_brought():
    with patched("shutil") as active:
        assert active == ["builtins", "os", "os.path", "shutil"]
    assert active_patches() == []


def test_copyfile_between_urls(tree):
    url, fs = tree
    assert shutil.copyfile(f"{url}/src/a.txt", f"{url}/c.txt") == f"{url}/c.txt"
    assert _read(fs, "c.txt") == "a"


def test_copyfile_replaces_an_existing_destination(tree):
    url, fs = tree
    shutil.copyfile(f"{url}/src/a.txt", f"{url}/src/sub/b.txt")
    assert _read(fs, "src/sub/b.txt") == "a"


def test_copyfile_from_a_url_to_a_local_path_and_back(tree, local):
    url, fs = tree
    shutil.copyfile(f"{url}/src/a.txt", str(local / "a.txt"))
    assert (local / "a.txt").read_text() == "a"
    shutil.copyfile(str(local / "l.txt"), f"{url}/l.txt")
    assert _read(fs, "l.txt") == "l"


def test_copyfile_onto_itself_raises_same_file_error(tree):
    url, _ = tree
    with pytest.raises(shutil.SameFileError):
        shutil.copyfile(f"{url}/src/a.txt", f"{url}/src/./a.txt")


def test_copyfile_of_a_missing_url_raises_file_not_found(tree):
    url, fs = tree
    with pytest.raises(FileNotFoundError):
        shutil.copyfile(f"{url}/src/none.txt", f"{url}/c.txt")
    assert not fs.exists("c.txt")


def test_copy_into_a_remote_directory_keeps_the_name(tree, local):
    url, fs = tree
    assert shutil.copy(str(local / "l.txt"), f"{url}/src/sub") == f"{url}/src/sub/l.txt"
    assert _read(fs, "src/sub/l.txt") == "l"


def test_copy_from_a_url_sets_the_local_mode(tree, local):
    url, _ = tree
    os.chmod(local / "l.txt", 0o600)
    shutil.copy(f"{url}/src/a.txt", str(local / "l.txt"))
    assert (local / "l.txt").read_text() == "a"
    assert stat.S_IMODE(os.stat(local / "l.txt").st_mode) == 0o644  # the remote file's


def test_copy2_from_a_url_keeps_its_modification_time(tree, local):
    url, _ = tree
    shutil.copy2(f"{url}/src/a.txt", str(local / "a.txt"))
    assert os.stat(local / "a.txt").st_mtime == pytest.approx(
        os.stat(f"{url}/src/a.txt").st_mtime)


def test_copy2_to_a_url(tree, local):
    url, fs = tree
    shutil.copy2(str(local / "l.txt"), f"{url}/l2.txt")
    assert _read(fs, "l2.txt") == "l"


def test_copystat_of_a_missing_remote_source_raises(tree, local):
    url, _ = tree
    with pytest.raises(FileNotFoundError):
        shutil.copystat(f"{url}/src/none.txt", str(local / "l.txt"))


def test_copytree_between_urls(tree):
    url, fs = tree
    assert shutil.copytree(f"{url}/src", f"{url}/dst") == f"{url}/dst"
    assert _read(fs, "dst/a.txt") == "a" and _read(fs, "dst/sub/b.txt") == "b"


def test_copytree_from_a_url_to_a_local_directory(tree, tmp_path):
    url, _ = tree
    shutil.copytree(f"{url}/src", str(tmp_path / "copy"), ignore=shutil.ignore_patterns("a*"))
    assert sorted(p.relative_to(tmp_path / "copy").as_posix()
                  for p in (tmp_path / "copy").rglob("*")) == ["sub", "sub/b.txt"]


def test_copytree_from_a_local_directory_to_a_url(tree, local):
    url, fs = tree
    shutil.copytree(str(local), f"{url}/up")
    assert _read(fs, "up/l.txt") == "l" and _read(fs, "up/ld/m.txt") == "m"


def test_copytree_onto_an_existing_directory_needs_dirs_exist_ok(tree, local):
    url, fs = tree
    with pytest.raises(FileExistsError):
        shutil.copytree(str(local), f"{url}/src")
    shutil.copytree(str(local), f"{url}/src", dirs_exist_ok=True)
    assert sorted(fs.list("src")) == ["a.txt", "l.txt", "ld/", "sub/"]


def test_copytree_with_a_custom_copy_function(tree):
    url, fs = tree
    copied = []

    def copy(src, dst):
        copied.append(src)
        return shutil.copyfile(src, dst)

    shutil.copytree(f"{url}/src", f"{url}/dst", copy_function=copy)
    assert sorted(copied) == [f"{url}/src/a.txt", f"{url}/src/sub/b.txt"]
    assert _read(fs, "dst/sub/b.txt") == "b"


def test_rmtree_removes_a_remote_directory(tree):
    url, fs = tree
    shutil.rmtree(f"{url}/src")
    assert not fs.exists("src") and not fs.exists("src/sub/b.txt")


def test_rmtree_of_a_missing_url_raises_or_is_ignored(tree):
    url, _ = tree
    with pytest.raises(FileNotFoundError):
        shutil.rmtree(f"{url}/nowhere")
    shutil.rmtree(f"{url}/nowhere", ignore_errors=True)


def test_rmtree_reports_to_onerror(tree):
    url, _ = tree
    errors = []
    shutil.rmtree(f"{url}/nowhere", onerror=lambda fn, path, info: errors.append(
        (path, info[0])))
    assert errors == [(f"{url}/nowhere", FileNotFoundError)]


def test_rmtree_of_a_file_raises_not_a_directory(tree):
    url, fs = tree
    with pytest.raises(NotADirectoryError):
        shutil.rmtree(f"{url}/src/a.txt")
    assert fs.exists("src/a.txt")


def test_rmtree_refuses_the_root(tree):
    url, fs = tree
    root = url.split("/patches")[0] if url.startswith("s3://") else url
    with pytest.raises(PermissionError):
        shutil.rmtree(root)
    assert fs.exists("src/a.txt")


def test_move_renames_within_a_filesystem(tree):
    url, fs = tree
    assert shutil.move(f"{url}/src/a.txt", f"{url}/moved.txt") == f"{url}/moved.txt"
    assert _read(fs, "moved.txt") == "a" and not fs.exists("src/a.txt")


def test_move_into_a_remote_directory(tree):
    url, fs = tree
    shutil.move(f"{url}/src/a.txt", f"{url}/src/sub")
    assert sorted(fs.list("src/sub")) == ["a.txt", "b.txt"]
    assert not fs.exists("src/a.txt")


def test_move_of_a_file_from_a_url_to_a_local_path(tree, tmp_path):
    url, fs = tree
    shutil.move(f"{url}/src/a.txt", str(tmp_path / "a.txt"))
    assert (tmp_path / "a.txt").read_text() == "a" and not fs.exists("src/a.txt")


def test_move_of_a_local_directory_to_a_url(tree, local):
    url, fs = tree
    shutil.move(str(local), f"{url}/uploaded")
    assert _read(fs, "uploaded/ld/m.txt") == "m" and not local.exists()


def test_move_of_a_directory_between_filesystems(tree):
    url, fs = tree
    other = f"mem://write-shutil-other-{url.split('://')[0]}"
    shutil.move(f"{url}/src", f"{other}/src")
    with pfio.from_url(other) as dst:
        assert _read(dst, "src/sub/b.txt") == "b"
    assert not fs.exists("src")


def test_move_onto_an_existing_name_in_a_directory_raises(tree):
    url, fs = tree
    _put(fs, "dir/a.txt", "old")
    with pytest.raises(shutil.Error, match="already exists"):
        shutil.move(f"{url}/src/a.txt", f"{url}/dir")
    assert _read(fs, "dir/a.txt") == "old"


def test_local_copies_and_moves_are_untouched(local, tmp_path):
    patch_all("shutil")
    shutil.copy2(local / "l.txt", local / "l2.txt")
    shutil.copytree(local / "ld", tmp_path / "ld2")
    shutil.move(str(local / "l2.txt"), str(tmp_path / "l3.txt"))
    shutil.rmtree(local / "ld")
    assert sorted(os.listdir(local)) == ["l.txt"]
    assert (tmp_path / "ld2" / "m.txt").read_text() == "m"
    assert (tmp_path / "l3.txt").read_text() == "l"
    with pytest.raises(OSError) as info:
        shutil.rmtree(local / "l.txt")
    assert info.value.errno == errno.ENOTDIR


def test_unpatch_restores_shutil():
    originals = [shutil.copymode, shutil.copystat, shutil.copytree, shutil.rmtree]
    patch_all("shutil")
    assert shutil.rmtree is not originals[-1]
    assert shutil.rmtree.avoids_symlink_attacks == originals[-1].avoids_symlink_attacks
    unpatch_all()
    assert [shutil.copymode, shutil.copystat, shutil.copytree, shutil.rmtree] == originals


def test_copyfile_through_the_object_cache(remote, local):
    url, fs = remote
    _put(fs, "c.txt", "cached")
    patch_all("shutil", cache=True)
    for _ in range(2):  # the second copy reads the cached copy
        shutil.copyfile(f"{url}/c.txt", str(local / "c.txt"))
        assert (local / "c.txt").read_text() == "cached"
    shutil.copyfile(f"{url}/c.txt", f"{url}/d.txt")
    assert _read(fs, "d.txt") == "cached"
