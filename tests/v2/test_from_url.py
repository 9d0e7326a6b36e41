import subprocess
import sys

import pytest

import pfio
import pfio.v2
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.testing import ZipForTest


def test_names_are_the_objects_of_pfio():
    assert pfio.v2.FS is pfio.FS
    assert pfio.v2.FileStat is pfio.FileStat
    assert pfio.v2.Local is Local
    assert isinstance(pfio.v2.local, Local)


def test_containers_are_the_objects_of_pfio():
    zip_module = pytest.importorskip("pfio.containers.zip")
    assert pfio.v2.Zip is zip_module.Zip


def test_tar_is_the_object_of_pfio():
    tar_module = pytest.importorskip("pfio.containers.tar")
    assert pfio.v2.Tar is tar_module.Tar


@pytest.mark.parametrize("name, module", [("S3", "pfio.fs.s3"), ("Hdfs", "pfio.fs.hdfs")])
def test_backends_are_loaded_on_first_use(name, module):
    backend = pytest.importorskip(module)
    assert getattr(pfio.v2, name) is getattr(backend, name)


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = pfio.v2.Nope


def test_import_loads_no_optional_dependency():
    code = ("import sys, pfio.v2; "
            "print(sorted(m for m in ('boto3', 'botocore', 'torch', 'cv2', 'pandas', "
            "'hdfs_native') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_without_force_type_it_is_pfio_from_url(tmp_path):
    fs = pfio.v2.from_url(str(tmp_path))
    assert isinstance(fs, Local) and fs.cwd == str(tmp_path)


def test_zip_suffix_opens_the_archive(tmp_path):
    zip_module = pytest.importorskip("pfio.containers.zip")
    ZipForTest(tmp_path / "a.zip")
    with pfio.v2.from_url(str(tmp_path / "a.zip")) as fs:
        assert isinstance(fs, zip_module.Zip)


def test_force_type_zip_opens_a_file_without_the_suffix(tmp_path):
    pytest.importorskip("pfio.containers.zip")
    ZipForTest(tmp_path / "archive.bin")
    with pfio.v2.from_url(str(tmp_path / "archive.bin"), force_type="zip") as fs:
        assert sorted(fs.list()) == ["dir", "file"]
        with fs.open("dir/f", "rb") as f:
            assert f.read() == b"bar"


def test_force_type_zip_on_mem(request):
    pytest.importorskip("pfio.containers.zip")
    store = MemoryFS("v2zip-" + request.node.name)
    with store.open_zip("blob", "w") as z, z.open("m.txt", "wb") as f:
        f.write(b"member")
    with pfio.v2.from_url(f"mem://{store.name}/blob", force_type="zip") as fs:
        assert fs.open("m.txt", "rb").read() == b"member"


def test_force_type_zip_refuses_create(tmp_path):
    with pytest.raises(ValueError, match="create"):
        pfio.v2.from_url(str(tmp_path / "x.zip"), force_type="zip", create=True)


def test_force_type_zip_needs_a_file_name():
    with pytest.raises(ValueError, match="names no file"):
        pfio.v2.from_url("mem://somewhere", force_type="zip")


def test_force_type_scheme_opens_a_directory_named_like_a_zip(tmp_path):
    (tmp_path / "looks.zip").mkdir()
    (tmp_path / "looks.zip" / "f").write_bytes(b"x")
    fs = pfio.v2.from_url(str(tmp_path / "looks.zip"), force_type="file")
    assert isinstance(fs, Local)
    assert list(fs.list()) == ["f"]


def test_force_type_scheme_does_not_open_a_zip_file(tmp_path):
    ZipForTest(tmp_path / "real.zip")
    with pytest.raises(NotADirectoryError):
        pfio.v2.from_url(str(tmp_path / "real.zip"), force_type="file")


def test_force_type_mem_scheme(request):
    fs = pfio.v2.from_url("mem://v2force/a.zip", force_type="mem")
    assert isinstance(fs, MemoryFS) and fs.root == "a.zip"


def test_force_type_must_match_the_scheme(tmp_path):
    with pytest.raises(ValueError, match="does not match the scheme 'file'"):
        pfio.v2.from_url(str(tmp_path), force_type="s3")
    with pytest.raises(ValueError, match="does not match the scheme 'mem'"):
        pfio.v2.from_url("mem://x/y", force_type="file")


def test_force_type_must_be_a_string(tmp_path):
    with pytest.raises(ValueError, match="must be a str"):
        pfio.v2.from_url(str(tmp_path), force_type=1)


@pytest.mark.parametrize("force_type", [None, "file"])
def test_create_makes_the_directory(tmp_path, force_type):
    target = tmp_path / "new" / "dir"
    fs = pfio.v2.from_url(str(target), create=True, force_type=force_type)
    assert target.is_dir() and isinstance(fs, Local)


def test_missing_directory_without_create(tmp_path):
    with pytest.raises(FileNotFoundError):
        pfio.v2.from_url(str(tmp_path / "missing"), force_type="file")
