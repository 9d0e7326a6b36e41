"""Directories on stores without them (S3 prefixes), as local code uses them: a directory
made through a patch is one to this process until removed (``tempfile.mkdtemp``, write,
move the file out, ``shutil.rmtree``), and a name ending with ``/`` always names a
directory (written under, or refused as local disk refuses it), never the file without the
``/``. On ``mem://`` and S3 (moto server)."""

import os
import shutil
import tempfile

import pytest

from pfio.patches import patch_all


@pytest.fixture
def url(remote):
    patch_all("shutil")
    return remote[0]


def _put(fs, name, text="x"):
    with fs.open(name, "w") as f:
        f.write(text)


def test_a_made_directory_is_an_empty_directory(url):
    os.mkdir(f"{url}/made")
    assert os.path.isdir(f"{url}/made") and os.path.exists(f"{url}/made")
    assert os.listdir(f"{url}/made") == []
    assert os.stat(f"{url}/made").st_mode & 0o170000 == 0o040000


def test_makedirs_makes_its_parents_too(url):
    os.makedirs(f"{url}/a/b/c")
    assert [os.path.isdir(f"{url}/{p}") for p in ("a", "a/b", "a/b/c")] == [True] * 3
    os.makedirs(f"{url}/a/b", exist_ok=True)
    with pytest.raises(FileExistsError):
        os.makedirs(f"{url}/a/b")


def test_mkdir_of_a_made_directory_raises_file_exists(url):
    os.mkdir(f"{url}/made")
    with pytest.raises(FileExistsError):
        os.mkdir(f"{url}/made")


def test_mkdtemp_write_move_out_rmtree(url, remote):
    fs = remote[1]
    tmp = tempfile.mkdtemp(prefix="tmp", dir=url)
    with open(f"{tmp}/snapshot", "wb") as f:
        f.write(b"weights")
    shutil.move(f"{tmp}/snapshot", f"{url}/snapshot")
    shutil.rmtree(tmp)
    assert fs.open("snapshot", "rb").read() == b"weights"
    assert not os.path.exists(tmp)
    assert sorted(os.listdir(url)) == ["snapshot"]


def test_rmtree_of_an_empty_made_directory(url):
    os.makedirs(f"{url}/empty")
    shutil.rmtree(f"{url}/empty")
    assert not os.path.isdir(f"{url}/empty")


def test_rmdir_of_an_empty_made_directory(url):
    os.mkdir(f"{url}/empty")
    os.rmdir(f"{url}/empty")
    assert not os.path.exists(f"{url}/empty")
    with pytest.raises(FileNotFoundError):
        os.rmdir(f"{url}/empty")


def test_rmtree_removes_files_and_the_record(url, remote):
    os.mkdir(f"{url}/d")
    _put(remote[1], "d/a.txt")
    shutil.rmtree(f"{url}/d")
    assert not os.path.exists(f"{url}/d")
    assert not os.path.exists(f"{url}/d/a.txt")


def test_rmtree_of_a_directory_never_made_still_raises(url):
    with pytest.raises(FileNotFoundError):
        shutil.rmtree(f"{url}/never")


def test_remove_of_a_made_directory_raises_is_a_directory(url):
    os.mkdir(f"{url}/d")
    with pytest.raises(IsADirectoryError):
        os.remove(f"{url}/d")


def test_copy_to_a_made_directory_with_a_slash_writes_under_it(url, remote, tmp_path):
    local = tmp_path / "w.bin"
    local.write_bytes(b"w")
    os.makedirs(f"{url}/up")
    assert shutil.copy(str(local), f"{url}/up/") == f"{url}/up/w.bin"
    assert remote[1].open("up/w.bin", "rb").read() == b"w"
    assert list(remote[1].list("up")) == ["w.bin"]


def test_copy_to_a_missing_directory_with_a_slash_raises_as_on_local_disk(url, remote,
                                                                            tmp_path):
    local = tmp_path / "w.bin"
    local.write_bytes(b"w")
    with pytest.raises(FileNotFoundError, match="Directory does not exist") as on_disk:
        shutil.copy(str(local), str(tmp_path / "up") + "/")
    with pytest.raises(FileNotFoundError, match="Directory does not exist") as raised:
        shutil.copy(str(local), f"{url}/up/")
    assert type(raised.value.__cause__) is type(on_disk.value.__cause__) is IsADirectoryError
    assert raised.value.__cause__.filename == f"{url}/up/"
    assert not remote[1].exists("up")


def test_open_for_writing_a_name_with_a_slash(url, remote):
    _put(remote[1], "file.txt")
    with pytest.raises(NotADirectoryError):
        open(f"{url}/file.txt/", "w")
    with pytest.raises(IsADirectoryError):
        open(f"{url}/new/", "w")
    assert remote[1].open("file.txt").read() == "x"
    assert not remote[1].exists("new")


def test_open_for_reading_a_name_with_a_slash(url, remote):
    _put(remote[1], "d/file.txt")
    with pytest.raises(NotADirectoryError):
        open(f"{url}/d/file.txt/")
    with pytest.raises(IsADirectoryError):
        open(f"{url}/d/")
    with pytest.raises(FileNotFoundError):
        open(f"{url}/missing/")


def test_rename_of_a_file_to_a_missing_directory_name_is_refused(url, remote):
    _put(remote[1], "a.txt")
    with pytest.raises(IsADirectoryError):
        os.rename(f"{url}/a.txt", f"{url}/missing/")
    assert remote[1].exists("a.txt") and not remote[1].exists("missing")


def test_move_of_a_file_into_a_made_directory_with_a_slash(url, remote):
    _put(remote[1], "a.txt")
    os.mkdir(f"{url}/into")
    shutil.move(f"{url}/a.txt", f"{url}/into/")
    assert remote[1].open("into/a.txt").read() == "x"
    assert not remote[1].exists("a.txt")


def test_a_library_writer_refuses_a_name_with_a_slash(url, remote):
    image = pytest.importorskip("PIL.Image")
    patch_all("PIL")
    with pytest.raises(IsADirectoryError):
        image.new("RGB", (2, 2)).save(f"{url}/out/", format="PNG")
    assert not remote[1].exists("out")


def test_rename_of_an_empty_made_directory_moves_it(url):
    os.mkdir(f"{url}/old")
    os.rename(f"{url}/old", f"{url}/new")
    assert os.path.isdir(f"{url}/new") and not os.path.exists(f"{url}/old")
    assert os.listdir(f"{url}/new") == []


def test_rename_of_an_empty_made_directory_onto_a_file_or_a_full_directory(url, remote):
    os.mkdir(f"{url}/old")
    _put(remote[1], "file")
    _put(remote[1], "full/x")
    with pytest.raises(NotADirectoryError):
        os.rename(f"{url}/old", f"{url}/file")
    with pytest.raises(OSError, match="not empty"):
        os.rename(f"{url}/old", f"{url}/full")
    assert os.path.isdir(f"{url}/old")


def test_rename_of_made_directories_moves_those_below(url):
    os.makedirs(f"{url}/a/b")
    os.rename(f"{url}/a", f"{url}/c")
    assert os.path.isdir(f"{url}/c/b") and not os.path.exists(f"{url}/a/b")


def test_a_made_directory_is_listed_in_its_parent(url, remote):
    _put(remote[1], "run/metrics.csv")
    os.makedirs(f"{url}/run/logs/version_0")
    assert sorted(os.listdir(f"{url}/run")) == ["logs", "metrics.csv"]
    assert [e.name for e in os.scandir(f"{url}/run/logs") if e.is_dir()] == ["version_0"]


def test_rename_of_a_full_directory_keeps_the_empty_ones_made_below(url, remote):
    _put(remote[1], "a/x")
    os.makedirs(f"{url}/a/empty")
    os.rename(f"{url}/a", f"{url}/b")
    assert os.path.isdir(f"{url}/b/empty") and not os.path.exists(f"{url}/a/empty")
