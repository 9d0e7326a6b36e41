"""NumPy's own file functions on S3 URLs after ``pfio.patch_all()``: ``load`` (an ``.npz``
is a real ``NpzFile``), ``save``, ``savez``, ``savez_compressed``, ``loadtxt``,
``genfromtxt``, ``savetxt``."""

import os

import numpy as np
import pytest

import pfio

from .path_like import PathLike


def test_load_of_an_npz_is_an_npzfile(s3_url):
    np.savez(f"{s3_url}/a.npz", x=np.arange(3), y=np.ones(2))
    with np.load(f"{s3_url}/a.npz") as npz:
        assert isinstance(npz, np.lib.npyio.NpzFile)
        assert sorted(npz.files) == ["x", "y"]
        np.testing.assert_array_equal(npz["x"], np.arange(3))
    assert npz.fid is None and npz.zip is None  # closed with the block


def test_npzfile_close_closes_the_remote_file(s3_url):
    np.savez(f"{s3_url}/a.npz", x=np.arange(3))
    npz = np.load(f"{s3_url}/a.npz")
    remote = npz.fid
    npz.close()
    assert remote.closed


def test_savez_appends_npz_and_savez_compressed_compresses(s3_url):
    data = np.zeros(10000)
    np.savez(f"{s3_url}/plain", x=data)
    np.savez_compressed(f"{s3_url}/small", x=data)
    fs = pfio.from_url(s3_url)
    assert sorted(fs.list()) == ["plain.npz", "small.npz"]
    assert fs.stat("small.npz").size < fs.stat("plain.npz").size / 10
    np.testing.assert_array_equal(np.load(f"{s3_url}/small.npz")["x"], data)


def test_save_and_load_npy(s3_url):
    np.save(f"{s3_url}/a", np.arange(4))
    np.testing.assert_array_equal(np.load(f"{s3_url}/a.npy"), np.arange(4))


@pytest.mark.parametrize("name", ["t.txt", "t.csv.gz", "t.txt.bz2", "t.txt.xz"])
def test_savetxt_loadtxt_genfromtxt(s3_url, name):
    data = np.arange(6, dtype=float).reshape(2, 3)
    np.savetxt(f"{s3_url}/{name}", data, delimiter=",")
    np.testing.assert_array_equal(np.loadtxt(f"{s3_url}/{name}", delimiter=","), data)
    np.testing.assert_array_equal(np.genfromtxt(f"{s3_url}/{name}", delimiter=","), data)


def test_savetxt_of_a_gz_name_is_gzip(s3_url):
    np.savetxt(f"{s3_url}/t.txt.gz", np.ones(2))
    with pfio.open_url(f"{s3_url}/t.txt.gz", "rb") as f:
        assert f.read(2) == b"\x1f\x8b"


def test_savez_that_fails_writes_nothing(s3_url):
    with pytest.raises(ValueError, match="pickle"):
        np.savez(f"{s3_url}/bad.npz", x=np.array([{}]), allow_pickle=False)
    assert not pfio.from_url(s3_url).exists("bad.npz")


def test_paths_by_keyword(s3_url):
    np.savez(file=f"{s3_url}/k.npz", x=np.arange(2))
    np.savetxt(fname=f"{s3_url}/k.txt", X=np.ones(2))
    np.testing.assert_array_equal(np.loadtxt(fname=f"{s3_url}/k.txt"), np.ones(2))
    np.testing.assert_array_equal(np.load(f"{s3_url}/k.npz")["x"], np.arange(2))


def test_path_objects_by_keyword(s3_url, tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # a path object taken as local would land in ./s3:
    np.save(file=PathLike(f"{s3_url}/p.npy"), arr=np.arange(3))
    np.savez(file=PathLike(f"{s3_url}/p.npz"), x=np.arange(2))
    np.savetxt(fname=PathLike(f"{s3_url}/p.txt"), X=np.ones(2))
    np.testing.assert_array_equal(np.load(file=PathLike(f"{s3_url}/p.npy")), np.arange(3))
    np.testing.assert_array_equal(np.loadtxt(fname=PathLike(f"{s3_url}/p.txt")), np.ones(2))
    with np.load(file=PathLike(f"{s3_url}/p.npz")) as npz:
        np.testing.assert_array_equal(npz["x"], np.arange(2))
    assert os.listdir(tmp_path / "cwd") == []


def test_loadtxt_of_a_missing_url_raises_file_not_found(s3_url):
    with pytest.raises(FileNotFoundError):
        np.loadtxt(f"{s3_url}/missing.txt")
