import os
import string
import zipfile

import pytest

from pfio.testing import ZipForTest, make_random_str, make_zip, randstring


def _names(path):
    with zipfile.ZipFile(path) as z:
        return sorted(z.namelist())


def test_zipfortest_default_data(tmp_path):
    z = ZipForTest(tmp_path / "t.zip")
    assert _names(z.destfile) == ["dir/f", "file"]
    with zipfile.ZipFile(z.destfile) as archive:
        assert archive.read("file") == b"foo"
        assert archive.read("dir/f") == b"bar"


def test_zipfortest_writes_nested_data(tmp_path):
    data = {"a": b"1", "b": {"c": {"d": b"22"}}, "s": "text"}
    z = ZipForTest(str(tmp_path / "t.zip"), data)
    assert _names(z.destfile) == ["a", "b/c/d", "s"]
    with zipfile.ZipFile(z.destfile) as archive:
        assert archive.read("b/c/d") == b"22"
        assert archive.read("s") == b"text"


def test_zipfortest_keeps_empty_directories(tmp_path):
    z = ZipForTest(tmp_path / "t.zip", {"empty": {}, "f": b""})
    assert _names(z.destfile) == ["empty/", "f"]


def test_zipfortest_content_looks_up_paths(tmp_path):
    z = ZipForTest(tmp_path / "t.zip")
    assert z.content("dir/f") == b"bar"
    assert z.content("file") == b"foo"
    assert z.content("dir") == {"f": b"bar"}
    assert z.content("missing") is None
    assert z.content("file/under") is None


def test_zipfortest_context_manager_removes_the_file(tmp_path):
    path = tmp_path / "t.zip"
    with ZipForTest(path) as z:
        assert os.path.exists(z.destfile)
    assert not path.exists()


def test_zipfortest_readable_by_pfio(tmp_path):
    pfio_zip = pytest.importorskip("pfio.containers.zip")
    import pfio

    with ZipForTest(tmp_path / "t.zip"), pfio.from_url(str(tmp_path / "t.zip")) as fs:
        assert isinstance(fs, pfio_zip.Zip)
        assert sorted(fs.list()) == ["dir", "file"]


def test_make_zip_names_members_from_root_dir(tmp_path):
    root = tmp_path / "root"
    (root / "base" / "sub").mkdir(parents=True)
    (root / "base" / "a.txt").write_bytes(b"A")
    (root / "base" / "sub" / "b.txt").write_bytes(b"B")
    (root / "other.txt").write_bytes(b"not packed")
    out = tmp_path / "out.zip"
    make_zip(out, root, "base")
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == ["base/sub/", "base/a.txt", "base/sub/b.txt"]
        assert archive.read("base/sub/b.txt") == b"B"


def test_make_zip_does_not_change_the_working_directory(tmp_path):
    (tmp_path / "base").mkdir()
    before = os.getcwd()
    make_zip(tmp_path / "out.zip", tmp_path, "base")
    assert os.getcwd() == before


def test_make_zip_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        make_zip(tmp_path / "out.zip", tmp_path, "missing")


def test_randstring_is_alphanumeric_of_the_length():
    s = randstring(40)
    assert len(s) == 40
    assert set(s) <= set(string.ascii_letters + string.digits)
    assert len(randstring()) == 16


def test_make_random_str_is_alphanumeric_of_the_length():
    s = make_random_str(25)
    assert len(s) == 25
    assert s.isalnum() and s.isascii()
