"""``h5py.File`` and ``soundfile`` on URLs: reads through pfio file objects (ranged, no
spool), writes through a local file uploaded on close."""

import io

import h5py
import numpy as np
import pytest
import soundfile

import pfio
from pfio import trace
from pfio.patches import patch_all


def _upload_h5(fs, path, fill):
    """Write ``path`` on ``fs``: an HDF5 file that ``fill(h5py.File)`` fills."""
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as h5:
        fill(h5)
    with fs.open(path, "wb") as f:
        f.write(buffer.getvalue())


def _write_h5(fs, path):
    def fill(h5):
        h5.create_dataset("x", data=np.arange(20, dtype=np.int32).reshape(4, 5))
        h5.attrs["label"] = "train"
        h5["x"].attrs["scale"] = 0.5

    _upload_h5(fs, path, fill)


def test_h5py_reads_datasets_and_attributes(remote):
    url, fs = remote
    _write_h5(fs, "d.h5")
    patch_all("h5py")
    with h5py.File(f"{url}/d.h5", "r") as f:
        assert isinstance(f, h5py.File)
        np.testing.assert_array_equal(f["x"][1:3], np.arange(5, 15).reshape(2, 5))
        assert f.attrs["label"] == "train" and f["x"].attrs["scale"] == 0.5


def test_h5py_reads_a_zip_member(remote):
    url, fs = remote
    with fs.open_zip("shard.zip", "w") as archive:
        _write_h5(archive, "inner/d.h5")
    patch_all("h5py")
    with h5py.File(f"{url}/shard.zip/inner/d.h5") as f:
        np.testing.assert_array_equal(f["x"][3], np.arange(15, 20))
        assert f.attrs["label"] == "train"


def test_h5py_reads_ranges_not_the_whole_file(s3_env, s3_bucket):
    row = 64 << 10
    with pfio.from_url(f"s3://{s3_bucket}") as fs:
        _upload_h5(fs, "big.h5", lambda h5: h5.create_dataset(
            "x", data=np.arange(256, dtype=np.uint8).repeat(row).reshape(256, row),
            chunks=(1, row)))
    patch_all("h5py")
    trace.enable()
    try:
        with h5py.File(f"s3://{s3_bucket}/big.h5") as f:
            for index in (200, 13, 77):
                assert (f["x"][index] == index).all()
        moved = trace.metrics().requests[("s3", "GET")].bytes
    finally:
        trace.disable()
    assert moved <= 2 * 3 * row + (1 << 20)  # of a 16 MiB file


def test_h5py_reads_through_the_object_cache_when_it_is_on(s3_env, s3_bucket, object_cache):
    with pfio.from_url(f"s3://{s3_bucket}") as fs:
        _write_h5(fs, "d.h5")
    patch_all("h5py", cache=True)
    for _ in range(2):
        trace.enable()
        try:
            with h5py.File(f"s3://{s3_bucket}/d.h5") as f:
                assert f.attrs["label"] == "train"
            requests = trace.metrics().requests
        finally:
            trace.disable()
    assert ("s3", "GET") not in requests  # the second pass read local disk
    assert object_cache.usage() > 0


def test_h5py_write_uploads_on_close(remote):
    url, fs = remote
    patch_all("h5py")
    f = h5py.File(f"{url}/out.h5", "w")
    f["y"] = np.arange(3)
    assert not fs.exists("out.h5")
    f.close()
    with h5py.File(f"{url}/out.h5") as f:
        np.testing.assert_array_equal(f["y"][:], np.arange(3))


def test_h5py_append_keeps_what_was_there(remote):
    url, fs = remote
    _write_h5(fs, "d.h5")
    patch_all("h5py")
    with h5py.File(f"{url}/d.h5", "a") as f:
        f["z"] = np.zeros(2)
    with h5py.File(f"{url}/d.h5") as f:
        assert sorted(f) == ["x", "z"]


def test_h5py_write_dropped_when_the_block_raises(remote):
    url, fs = remote
    patch_all("h5py")
    with pytest.raises(RuntimeError), h5py.File(f"{url}/bad.h5", "w") as f:
        f["y"] = np.arange(3)
        raise RuntimeError("boom")
    assert not fs.exists("bad.h5")


def test_h5py_missing_remote_file_raises(remote):
    url, _ = remote
    patch_all("h5py")
    with pytest.raises(FileNotFoundError):
        h5py.File(f"{url}/missing.h5")


def test_h5py_local_paths_reach_the_original(tmp_path):
    patch_all("h5py")
    with h5py.File(tmp_path / "l.h5", "w") as f:
        f["a"] = [1]
    with h5py.File(str(tmp_path / "l.h5")) as f:
        assert type(f) is h5py._hl.files.File and f["a"][0] == 1


def _tone(rate=8000):
    return (np.sin(np.arange(rate // 4) / 5) * 0.5).astype(np.float32)


def test_soundfile_round_trip(remote):
    url, fs = remote
    patch_all("soundfile")
    soundfile.write(f"{url}/a.flac", _tone(), 8000)
    assert fs.exists("a.flac")
    data, rate = soundfile.read(f"{url}/a.flac", dtype="float32")
    assert rate == 8000
    np.testing.assert_allclose(data, _tone(), atol=1e-4)
    assert soundfile.info(f"{url}/a.flac").frames == len(_tone())


def test_soundfile_object_reads_blocks(remote):
    url, fs = remote
    patch_all("soundfile")
    soundfile.write(f"{url}/a.wav", _tone(), 8000, subtype="FLOAT")
    with soundfile.SoundFile(f"{url}/a.wav") as f:
        assert isinstance(f, soundfile.SoundFile) and f.name == f"{url}/a.wav"
        f.seek(100)
        np.testing.assert_array_equal(f.read(10, dtype="float32"), _tone()[100:110])


def test_soundfile_write_dropped_when_the_block_raises(remote):
    url, fs = remote
    patch_all("soundfile")
    with pytest.raises(RuntimeError), soundfile.SoundFile(f"{url}/bad.wav", "w", 8000, 1) as f:
        f.write(_tone())
        raise RuntimeError("boom")
    assert not fs.exists("bad.wav")


def test_soundfile_missing_remote_file_raises(remote):
    url, _ = remote
    patch_all("soundfile")
    with pytest.raises(FileNotFoundError):
        soundfile.read(f"{url}/missing.wav")
