"""PFIO 2.10's module paths and what they hold: ``import pfio`` reaches ``pfio.v2`` and
``pfio.cache``; the FileStat classes and their fields; ``pfio.v2.fs``'s helpers."""

from __future__ import annotations

import errno
import importlib.metadata
import os
import pickle
import subprocess
import sys
import zipfile

import pytest

import pfio
import pfio.v2
from pfio.fs.stat import FileStat


def test_import_pfio_reaches_v2_and_cache_lazily():
    script = (
        "import sys, pfio\n"
        "print('pfio.v2' in sys.modules, 'pfio.cache' in sys.modules)\n"
        "fs = pfio.v2.from_url('mem://lazy/x', create=True)\n"
        "print(type(fs).__name__, pfio.cache.NaiveCache(2).get(0))\n"
        "heavy = ['boto3', 'botocore', 'torch', 'cv2', 'pandas', 'numpy', 'pyarrow']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[:3] == ["False False", "MemoryFS None", "[]"]


def test_version_is_the_packages():
    version = importlib.metadata.version("pfio")
    assert pfio.__version__ == pfio.version.__version__ == pfio.v2.fs.__version__ == version


def test_unknown_attribute_of_pfio():
    with pytest.raises(AttributeError, match="no attribute 'v3'"):
        _ = pfio.v3


@pytest.mark.parametrize("name", ["s3", "hdfs", "zip", "http_cache"])
def test_submodules_are_attributes_of_pfio_v2(name):
    assert getattr(pfio.v2, name).__name__ == f"pfio.v2.{name}"


def test_pfio_v2_local_stays_the_filesystem_after_its_module_is_imported():
    import pfio.v2.local as module_or_fs  # noqa: F401 - the import is what is tested

    assert isinstance(pfio.v2.local, pfio.v2.Local)
    assert sys.modules["pfio.v2.local"].LocalFileStat is pfio.v2.LocalFileStat


def test_local_file_stat_fields(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    st = pfio.v2.Local(str(tmp_path)).stat("f")
    os_st = os.stat(tmp_path / "f")
    assert isinstance(st, pfio.v2.LocalFileStat) and isinstance(st, FileStat)
    assert (st.size, st.mode, st.last_modified) == (3, os_st.st_mode, os_st.st_mtime)
    assert (st.last_modified_ns, st.uid, st.gid, st.ino, st.nlink) == (
        os_st.st_mtime_ns, os_st.st_uid, os_st.st_gid, os_st.st_ino, os_st.st_nlink)
    assert not st.isdir()


def test_local_file_stat_from_an_os_stat(tmp_path):
    st = pfio.v2.LocalFileStat(os.stat(tmp_path), "d")
    assert st.filename == "d" and st.isdir()


def test_local_listing_gives_local_file_stats(tmp_path):
    (tmp_path / "f").write_bytes(b"")
    [st] = pfio.v2.Local(str(tmp_path)).list(detail=True)
    assert isinstance(st, pfio.v2.LocalFileStat)


def test_zip_file_stat_has_pfio2_field_names(tmp_path):
    path = str(tmp_path / "a.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("dir/m.txt", b"x" * 100)
    info = zipfile.ZipFile(path).getinfo("dir/m.txt")
    with pfio.v2.from_url(path) as fs:
        st = fs.stat("dir/m.txt")
    assert isinstance(st, pfio.v2.ZipFileStat)
    assert (st.size, st.CRC, st.compress_size, st.header_offset, st.flag_bits) == (
        100, info.CRC, info.compress_size, info.header_offset, info.flag_bits)


def test_hdfs_file_stat():
    from pfio.testing.hdfs_standin import StandinFactory

    fs = pfio.v2.Hdfs("/top", nameservice="standin", create=True,
                      client_factory=StandinFactory("v2-stat"))
    with fs.open("f", "wb") as f:
        f.write(b"12345")
    st = fs.stat("f")
    assert isinstance(st, pfio.v2.HdfsFileStat)
    assert (st.size, st.isdir()) == (5, False)


def test_forked_error_is_a_runtime_error():
    assert issubclass(pfio.v2.fs.ForkedError, RuntimeError)


def test_lazify_is_deprecated_and_returns_the_filesystem():
    with pytest.warns(DeprecationWarning, match="lazify"):
        fs = pfio.v2.lazify(lambda: pfio.v2.from_url("mem://lazify/x", create=True))
    assert fs.exists("") and fs.isdir("")


def test_from_url_warns_of_reset_on_fork():
    with pytest.warns(DeprecationWarning, match="reset_on_fork"):
        fs = pfio.v2.from_url("mem://resetonfork/x", create=True, reset_on_fork=True)
    assert pickle.loads(pickle.dumps(fs)).isdir("")


def test_format_repr():
    assert pfio.v2.fs.format_repr(FileStat, {"a": 1, "b": "x"}) == \
        "pfio.fs.stat.FileStat(a=1, b='x')"


def test_missing_root_is_a_value_error_as_in_pfio2_and_a_file_not_found_error(tmp_path):
    missing = str(tmp_path / "missing")
    with pytest.raises(ValueError) as caught:
        pfio.v2.from_url(missing)
    assert isinstance(caught.value, FileNotFoundError)
    assert (caught.value.errno, caught.value.filename) == (errno.ENOENT, missing)
    assert pfio.v2.from_url(missing, create=True).isdir("")


def test_a_file_forced_as_a_directory_is_a_value_error_too(tmp_path):
    path = str(tmp_path / "t.zip")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("m", b"")
    with pytest.raises(ValueError) as caught:
        pfio.v2.from_url(path, force_type="file")
    assert isinstance(caught.value, NotADirectoryError)


def test_missing_zip_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        pfio.v2.from_url(str(tmp_path / "no.zip"))


def test_open_url_without_pfio2_options_is_pfios(tmp_path):
    (tmp_path / "t.txt").write_text("hello")
    with pfio.v2.open_url(str(tmp_path / "t.txt")) as f:
        assert f.read() == "hello"


def test_open_url_force_type(tmp_path):
    path = str(tmp_path / "t.txt")
    (tmp_path / "t.txt").write_text("hello")
    with pfio.v2.open_url(path, "r", force_type="file") as f:
        assert f.read() == "hello"
    with pytest.raises(ValueError, match="does not match the scheme"):
        pfio.v2.open_url(path, force_type="hdfs")
    with pytest.raises(IsADirectoryError):  # the directory is taken for the zip
        pfio.v2.open_url(path, force_type="zip")


def test_open_url_member_of_a_forced_zip(tmp_path):
    with zipfile.ZipFile(tmp_path / "archive.bin", "w") as z:
        z.writestr("m.txt", b"member")
    with pfio.v2.open_url(str(tmp_path / "archive.bin" / "m.txt"), "rb",
                          force_type="zip") as f:
        assert f.read() == b"member"


def test_open_url_through_an_http_cache(tmp_path):
    import pfio.testing

    (tmp_path / "c.bin").write_bytes(b"cached")
    with pfio.testing.make_http_server() as (_, port):
        with pfio.v2.open_url(str(tmp_path / "c.bin"), "rb",
                              http_cache=f"http://127.0.0.1:{port}/") as f:
            assert f.read() == b"cached"
        assert list(pfio.testing.OnMemoryHTTPServerForTest.files.values()) == [b"cached"]


def test_http_connector_is_exported_by_pfio_v2_http_cache_as_in_pfio2():
    import pfio.v2.http_cache

    assert pfio.v2.http_cache.HTTPConnector is pfio.cache.HTTPConnector
    assert "HTTPConnector" in pfio.v2.http_cache.__all__
