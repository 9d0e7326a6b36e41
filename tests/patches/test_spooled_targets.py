"""Patched functions that need a local file: cv2 and pandas/HDF5 (through the object cache)."""

import cv2
import numpy as np
import pandas as pd
import pytest

from pfio.patches import patch_all


def _image():
    image = np.zeros((6, 8, 3), np.uint8)
    image[:, :4] = (10, 20, 30)
    return image


def test_imwrite_and_imread_round_trip(remote):
    url, fs = remote
    patch_all("cv2")
    assert cv2.imwrite(f"{url}/a.png", _image())
    assert fs.exists("a.png")
    np.testing.assert_array_equal(cv2.imread(f"{url}/a.png"), _image())


def test_imread_of_missing_remote_returns_none(remote):
    url, _ = remote
    patch_all("cv2")
    assert cv2.imread(f"{url}/missing.png") is None


def test_imreadmulti_reads_pages(remote):
    url, fs = remote
    ok, encoded = cv2.imencode(".tiff", _image())
    with fs.open("pages.tiff", "wb") as f:
        f.write(encoded.tobytes())
    patch_all("cv2")
    ok, pages = cv2.imreadmulti(f"{url}/pages.tiff")
    assert ok and len(pages) == 1


def test_failed_imwrite_uploads_nothing(remote):
    url, fs = remote
    patch_all("cv2")
    with pytest.raises(cv2.error):
        cv2.imwrite(f"{url}/bad.unknownext", _image())
    assert not fs.exists("bad.unknownext")


def test_video_written_and_read_frame_by_frame(remote):
    url, fs = remote
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


def test_to_hdf_and_read_hdf_round_trip(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_hdf(f"{url}/t.h5", key="table", mode="w")
    assert fs.exists("t.h5")
    pd.testing.assert_frame_equal(pd.read_hdf(f"{url}/t.h5", "table"), _frame())


def test_to_hdf_appends_to_an_existing_object(remote):
    url, _ = remote
    patch_all("pandas")
    _frame().to_hdf(f"{url}/t.h5", key="one", mode="w")
    _frame().to_hdf(f"{url}/t.h5", key="two")  # mode "a", the default
    with pd.HDFStore(f"{url}/t.h5", mode="r") as store:
        assert sorted(store.keys()) == ["/one", "/two"]


def test_read_hdf_of_missing_remote_raises_file_not_found(remote):
    url, _ = remote
    patch_all("pandas")
    with pytest.raises(FileNotFoundError):
        pd.read_hdf(f"{url}/none.h5", "x")


def test_hdfstore_write_mode_uploads_on_close(remote):
    url, fs = remote
    patch_all("pandas")
    store = pd.HDFStore(f"{url}/s.h5", mode="w")
    store.put("frame", _frame(), track_times=False)
    assert not fs.exists("s.h5")
    store.close()
    pd.testing.assert_frame_equal(pd.read_hdf(f"{url}/s.h5", "frame"), _frame())


def test_mmap_load_after_numpy_save_sees_the_new_array(remote):
    url, _ = remote
    patch_all("numpy")
    np.save(f"{url}/a.npy", np.zeros(3))
    np.testing.assert_array_equal(np.load(f"{url}/a.npy", mmap_mode="r"), np.zeros(3))
    np.save(f"{url}/a.npy", np.ones(3))
    np.testing.assert_array_equal(np.load(f"{url}/a.npy", mmap_mode="r"), np.ones(3))


def test_imread_after_a_patched_open_rewrote_the_file_sees_the_new_image(remote):
    url, _ = remote
    patch_all(["cv2", "builtins"])
    assert cv2.imwrite(f"{url}/b.png", _image())
    np.testing.assert_array_equal(cv2.imread(f"{url}/b.png"), _image())
    ok, png = cv2.imencode(".png", 255 - _image())
    with open(f"{url}/b.png", "wb") as f:
        f.write(png.tobytes())
    np.testing.assert_array_equal(cv2.imread(f"{url}/b.png"), 255 - _image())
