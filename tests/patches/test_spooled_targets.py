"""Patched functions that need a local file: cv2 and pandas/HDF5 (through the object cache)."""

import cv2
import numpy as np
import pandas as pd
import pytest

from pfio.patches import patch_all


@pytest.fixture(autouse=True)
def _private_object_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    import pfio.cache.object_cache as object_cache

    monkeypatch.setattr(object_cache, "_default", None, raising=False)


def _image():
    image = np.zeros((6, 8, 3), np.uint8)
    image[:, :4] = (10, 20, 30)
    return image


def test_imwrite_and_imread_round_trip(mem):
    url, fs = mem
    patch_all("cv2")
    assert cv2.imwrite(f"{url}/a.png", _image())
    assert fs.exists("a.png")
    np.testing.assert_array_equal(cv2.imread(f"{url}/a.png"), _image())


def test_imread_of_missing_remote_returns_none(mem):
    url, _ = mem
    patch_all("cv2")
    assert cv2.imread(f"{url}/missing.png") is None


def test_imreadmulti_reads_pages(mem):
    url, fs = mem
    ok, encoded = cv2.imencode(".tiff", _image())
    with fs.open("pages.tiff", "wb") as f:
        f.write(encoded.tobytes())
    patch_all("cv2")
    ok, pages = cv2.imreadmulti(f"{url}/pages.tiff")
    assert ok and len(pages) == 1


def test_failed_imwrite_uploads_nothing(mem):
    url, fs = mem
    patch_all("cv2")
    with pytest.raises(cv2.error):
        cv2.imwrite(f"{url}/bad.unknownext", _image())
    assert not fs.exists("bad.unknownext")


def test_video_written_and_read_frame_by_frame(mem):
    url, fs = mem
    patch_all("cv2")
    writer = cv2.VideoWriter(f"{url}/clip.avi", cv2.VideoWriter_fourcc(*"MJPG"), 10, (32, 24))
    assert isinstance(writer, cv2.VideoWriter)
    for i in range(6):
        writer.write(np.full((24, 32, 3), i * 40, np.uint8))
    assert not fs.exists("clip.avi")  # uploaded on release
    writer.release()
    capture = cv2.VideoCapture(f"{url}/clip.avi")
    assert isinstance(capture, cv2.VideoCapture) and capture.isOpened()
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(int(frame.mean()))
    capture.release()
    assert len(frames) == 6 and frames[0] < frames[-1]


def test_local_paths_reach_cv2_unchanged(tmp_path):
    patch_all("cv2")
    assert cv2.imwrite(str(tmp_path / "l.png"), _image())
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "l.png")), _image())


def _frame():
    return pd.DataFrame({"a": np.arange(5), "b": np.linspace(0, 1, 5)})


def test_to_hdf_and_read_hdf_round_trip(mem):
    url, fs = mem
    patch_all("pandas")
    _frame().to_hdf(f"{url}/t.h5", key="table", mode="w")
    assert fs.exists("t.h5")
    pd.testing.assert_frame_equal(pd.read_hdf(f"{url}/t.h5", "table"), _frame())


def test_to_hdf_appends_to_an_existing_object(mem):
    url, _ = mem
    patch_all("pandas")
    _frame().to_hdf(f"{url}/t.h5", key="one", mode="w")
    _frame().to_hdf(f"{url}/t.h5", key="two")  # mode "a", the default
    with pd.HDFStore(f"{url}/t.h5", mode="r") as store:
        assert sorted(store.keys()) == ["/one", "/two"]


def test_read_hdf_of_missing_remote_raises_file_not_found(mem):
    url, _ = mem
    patch_all("pandas")
    with pytest.raises(FileNotFoundError):
        pd.read_hdf(f"{url}/none.h5", "x")


def test_hdfstore_write_mode_uploads_on_close(mem):
    url, fs = mem
    patch_all("pandas")
    store = pd.HDFStore(f"{url}/s.h5", mode="w")
    store.put("frame", _frame(), track_times=False)
    assert not fs.exists("s.h5")
    store.close()
    pd.testing.assert_frame_equal(pd.read_hdf(f"{url}/s.h5", "frame"), _frame())
