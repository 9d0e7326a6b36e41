"""Patched functions read members of a zip through its URL (``.../data.zip/img.png``), on
``mem://`` and on S3; writing into a member is refused."""

import io
import os
import tempfile

import cv2
import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from pfio.patches import patch_all


@pytest.fixture
def zipped(remote):
    """``zipped({name: bytes})`` writes ``data.zip`` with those members to the remote
    directory and returns the zip's URL."""
    url, fs = remote

    def write(members):
        with fs.open_zip("data.zip", "w") as archive:
            for name, data in members.items():
                with archive.open(name, "wb") as f:
                    f.write(data)
        return f"{url}/data.zip"

    return write


def _image():
    image = np.zeros((6, 8, 3), np.uint8)
    image[:, :4] = (10, 20, 30)
    return image


def _png(image):
    ok, encoded = cv2.imencode(".png", image)
    assert ok
    return encoded.tobytes()


def _local_bytes(tmp_path, name, write):
    """The bytes of a file that ``write(path)`` creates locally (HDF5 and video writers
    need a path)."""
    path = str(tmp_path / name)
    write(path)
    with open(path, "rb") as f:
        return f.read()


def test_cv2_imread_reads_a_member(zipped):
    url = zipped({"images/img.png": _png(_image())})
    patch_all("cv2")
    np.testing.assert_array_equal(cv2.imread(f"{url}/images/img.png"), _image())


def test_cv2_imread_of_a_missing_member_returns_none(zipped):
    url = zipped({"img.png": _png(_image())})
    patch_all("cv2")
    assert cv2.imread(f"{url}/other.png") is None


def test_cv2_video_capture_reads_a_member_frame_by_frame(zipped, tmp_path):
    def write(path):
        writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 10, (32, 24))
        for i in range(6):
            writer.write(np.full((24, 32, 3), i * 40, np.uint8))
        writer.release()

    url = zipped({"clip.avi": _local_bytes(tmp_path, "clip.avi", write)})
    patch_all("cv2")
    capture = cv2.VideoCapture(f"{url}/clip.avi")
    assert capture.isOpened()
    means = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        means.append(frame.mean())
    capture.release()
    assert means == pytest.approx([i * 40 for i in range(6)], abs=3)


def test_pandas_read_hdf_reads_a_member(zipped, tmp_path):
    frame = pd.DataFrame({"a": np.arange(5), "b": np.linspace(0, 1, 5)})
    url = zipped({"t.h5": _local_bytes(
        tmp_path, "t.h5", lambda path: frame.to_hdf(path, key="table", mode="w"))})
    patch_all("pandas")
    pd.testing.assert_frame_equal(pd.read_hdf(f"{url}/t.h5", "table"), frame)


def test_numpy_load_reads_a_member(zipped):
    buffer = io.BytesIO()
    np.save(buffer, np.arange(12).reshape(3, 4))
    url = zipped({"arrays/a.npy": buffer.getvalue()})
    patch_all("numpy")
    np.testing.assert_array_equal(np.load(f"{url}/arrays/a.npy"), np.arange(12).reshape(3, 4))


def test_numpy_load_with_mmap_reads_a_member_from_the_object_cache(zipped, object_cache):
    buffer = io.BytesIO()
    np.save(buffer, np.arange(7.0))
    url = zipped({"a.npy": buffer.getvalue()})
    patch_all("numpy")
    array = np.load(f"{url}/a.npy", mmap_mode="r")
    np.testing.assert_array_equal(array, np.arange(7.0))
    assert os.path.dirname(array.filename).startswith(object_cache.dir)


def test_torch_load_reads_a_state_dict_member(zipped):
    model = torch.nn.Linear(3, 2)
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    url = zipped({"model.pt": buffer.getvalue()})
    patch_all("torch")
    state = torch.load(f"{url}/model.pt")
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())


def test_open_reads_a_text_member(zipped):
    url = zipped({"notes.txt": "héllo\n".encode()})
    patch_all("builtins")
    with open(f"{url}/notes.txt", encoding="utf-8") as f:
        assert f.read() == "héllo\n"


def test_pil_open_reads_a_member(zipped):
    url = zipped({"img.png": _png(_image())})
    patch_all("PIL")
    with Image.open(f"{url}/img.png") as image:
        assert image.size == (8, 6)
        assert image.getpixel((0, 0)) == (30, 20, 10)  # the BGR pixel of cv2, as RGB


def test_os_path_sees_members_and_directories_of_the_zip(zipped):
    url = zipped({"d/f.bin": b"12345"})
    patch_all("os.path")
    assert os.path.isfile(f"{url}/d/f.bin")
    assert os.path.isdir(f"{url}/d")
    assert not os.path.exists(f"{url}/d/nope")
    assert os.path.getsize(f"{url}/d/f.bin") == 5


def test_open_for_writing_a_member_is_unsupported_and_leaves_the_zip_as_it_was(zipped):
    url = zipped({"notes.txt": b"kept"})
    patch_all("builtins")
    with pytest.raises(io.UnsupportedOperation):
        open(f"{url}/notes.txt", "w")
    with open(f"{url}/notes.txt", "rb") as f:
        assert f.read() == b"kept"


def test_cv2_imwrite_into_a_member_raises_and_leaves_no_temporary_file(
        zipped, tmp_path, monkeypatch):
    url = zipped({"img.png": _png(_image())})
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    patch_all("cv2")
    with pytest.raises(io.UnsupportedOperation):
        cv2.imwrite(f"{url}/new.png", _image())
    assert list((tmp_path / "tmp").iterdir()) == []
