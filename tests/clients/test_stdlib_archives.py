"""The standard library's archive and compression modules on S3 URLs after
``pfio.patch_all()``: ``tarfile.open`` in every mode, ``gzip.open``, ``bz2.open``,
``lzma.open``, ``zipfile.ZipFile``, reading and writing."""

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile

import pytest

import pfio


def _tar_bytes(compression=""):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=f"w:{compression}") as tar:
        info = tarfile.TarInfo("a.txt")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    return buf.getvalue()


def _put(url, data):
    with pfio.open_url(url, "wb") as f:
        f.write(data)


def _get(url):
    with pfio.open_url(url, "rb") as f:
        return f.read()


@pytest.mark.parametrize("mode,compression,suffix", [
    ("r", "", ".tar"), ("r", "gz", ".tar.gz"), ("r", "bz2", ".tar.bz2"),
    ("r", "xz", ".tar.xz"), ("r:", "", ".tar"), ("r:gz", "gz", ".tar.gz"),
    ("r:bz2", "bz2", ".tar.bz2"), ("r:xz", "xz", ".tar.xz"), ("r|", "", ".tar"),
    ("r|gz", "gz", ".tar.gz"), ("r|*", "bz2", ".tar.bz2"), ("r:*", "xz", ".tar.xz"),
])
def test_tarfile_open_reads_a_url(s3_url, mode, compression, suffix):
    url = f"{s3_url}/t{suffix}"
    _put(url, _tar_bytes(compression))
    with tarfile.open(url, mode) as tar:
        member = tar.next()
        assert member.name == "a.txt"
        assert tar.extractfile(member).read() == b"hello"


@pytest.mark.parametrize("mode,suffix", [("w", ".tar"), ("w:gz", ".tar.gz"),
                                         ("w:bz2", ".tar.bz2"), ("w:xz", ".tar.xz"),
                                         ("w|gz", ".tar.gz"), ("x", ".tar")])
def test_tarfile_open_writes_a_url(s3_url, tmp_path, mode, suffix):
    (tmp_path / "a.txt").write_bytes(b"hello")
    url = f"{s3_url}/t{suffix}"
    with tarfile.open(url, mode) as tar:
        tar.add(str(tmp_path / "a.txt"), arcname="a.txt")
    with tarfile.open(fileobj=io.BytesIO(_get(url))) as tar:
        assert tar.extractfile("a.txt").read() == b"hello"


def test_tarfile_is_tarfile_of_a_url(s3_url):
    _put(f"{s3_url}/t.tar", _tar_bytes())
    assert tarfile.is_tarfile(f"{s3_url}/t.tar")


@pytest.mark.parametrize("module,suffix", [(gzip, ".gz"), (bz2, ".bz2"), (lzma, ".xz")])
def test_compression_open_reads_and_writes_a_url(s3_url, module, suffix):
    url = f"{s3_url}/c{suffix}"
    with module.open(url, "wt") as f:
        f.write("line\n")
    assert module.decompress(_get(url)) == b"line\n"
    with module.open(url, "rt") as f:
        assert f.read() == "line\n"
    with module.open(url) as f:
        assert f.read() == b"line\n"


@pytest.mark.parametrize("cls", [gzip.GzipFile, bz2.BZ2File, lzma.LZMAFile])
def test_compression_file_classes_take_a_url(s3_url, cls):
    url = f"{s3_url}/c.bin"
    with cls(url, "wb") as f:
        f.write(b"data")
    with cls(url, "rb") as f:
        assert f.read() == b"data"


def test_zipfile_writes_and_reads_a_url(s3_url):
    url = f"{s3_url}/z.zip"
    with zipfile.ZipFile(url, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.txt", "hello")
    assert zipfile.is_zipfile(url)
    with zipfile.ZipFile(url) as archive:
        assert archive.namelist() == ["a.txt"]
        assert archive.read("a.txt") == b"hello"
def test_zipfile_appends_to_a_url(s3_url):
    url = f"{s3_url}/z.zip"
    with zipfile.ZipFile(url, "w") as archive:
        archive.writestr("a.txt", "a")
    with zipfile.ZipFile(url, "a") as archive:
        archive.writestr("b.txt", "b")
    with zipfile.ZipFile(url) as archive:
        assert archive.namelist() == ["a.txt", "b.txt"]
