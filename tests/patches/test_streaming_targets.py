"""Patched functions that stream through pfio file objects (no object cache needed)."""

import io
import os

import numpy as np
import pytest
import torch
from PIL import Image

from pfio.patches import patch_all


def test_open_reads_and_writes_remote_text(remote):
    url, fs = remote
    patch_all("builtins")
    with open(f"{url}/notes.txt", "w", encoding="utf-8") as f:
        f.write("héllo\n")
    with open(f"{url}/notes.txt", encoding="utf-8") as f:
        assert f.read() == "héllo\n"


def test_io_open_is_patched_too(remote):
    url, fs = remote
    patch_all("builtins")
    with io.open(f"{url}/b.bin", "wb") as f:  # noqa: UP020 - io.open is patched too
        f.write(b"\x00\x01")
    assert fs.open("b.bin", "rb").read() == b"\x00\x01"


def test_open_of_a_missing_remote_file_raises_file_not_found(remote):
    url, _ = remote
    patch_all("builtins")
    with pytest.raises(FileNotFoundError):
        open(f"{url}/missing.txt")


def test_open_keeps_local_paths_and_fds(tmp_path):
    patch_all("builtins")
    (tmp_path / "local.txt").write_text("local")
    with open(tmp_path / "local.txt") as f:
        assert f.read() == "local"
    fd = os.open(tmp_path / "local.txt", os.O_RDONLY)
    with open(fd, "rb") as f:
        assert f.read() == b"local"


def test_open_passes_keywords_to_local_files(tmp_path):
    patch_all("builtins")
    path = tmp_path / "kw.txt"
    with open(file=path, mode="w", encoding="utf-16", newline="\r\n") as f:
        f.write("a\n")
    assert path.read_bytes() == "a\r\n".encode("utf-16")
    with open(path, "rb", buffering=0) as f:
        assert isinstance(f, io.FileIO)


def test_open_passes_keywords_to_urls(remote):
    url, fs = remote
    patch_all("builtins")
    with open(file=f"{url}/kw.txt", mode="w", encoding="utf-16", newline="\r\n") as f:
        f.write("a\n")
    assert fs.open("kw.txt", "rb").read() == "a\r\n".encode("utf-16")
    with open(f"{url}/kw.txt", encoding="utf-16", newline="") as f:
        assert f.read() == "a\r\n"


def test_open_rejects_an_opener_for_urls(remote):
    url, _ = remote
    patch_all("builtins")
    with pytest.raises(ValueError, match="opener"):
        open(f"{url}/x", "rb", opener=os.open)


def test_remote_write_error_publishes_nothing(remote):
    url, fs = remote
    patch_all("builtins")
    with pytest.raises(RuntimeError), open(f"{url}/half.txt", "w") as f:
        f.write("half")
        raise RuntimeError
    assert not fs.exists("half.txt")


def test_os_path_predicates(remote):
    url, fs = remote
    fs.makedirs("d")
    with fs.open("d/f.bin", "wb") as f:
        f.write(b"12345")
    patch_all("os.path")
    assert os.path.exists(f"{url}/d/f.bin")
    assert os.path.isfile(f"{url}/d/f.bin")
    assert os.path.isdir(f"{url}/d")
    assert not os.path.isfile(f"{url}/d")
    assert not os.path.exists(f"{url}/nope")
    assert os.path.getsize(f"{url}/d/f.bin") == 5


def test_os_path_getsize_of_missing_remote_raises(remote):
    url, _ = remote
    patch_all("os.path")
    with pytest.raises(FileNotFoundError):
        os.path.getsize(f"{url}/nope")


def test_numpy_save_and_load(remote):
    url, fs = remote
    patch_all("numpy")
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(f"{url}/a.npy", array)
    np.testing.assert_array_equal(np.load(f"{url}/a.npy"), array)


def test_numpy_save_appends_npy_like_for_paths(remote):
    url, fs = remote
    patch_all("numpy")
    np.save(f"{url}/b", np.zeros(2))
    assert fs.exists("b.npy")


def test_numpy_load_npz_is_loaded_eagerly(remote):
    url, fs = remote
    with fs.open("z.npz", "wb") as f:
        np.savez(f, x=np.ones(3), y=np.zeros(2))
    patch_all("numpy")
    loaded = np.load(f"{url}/z.npz")
    np.testing.assert_array_equal(loaded["x"], np.ones(3))


def test_torch_save_and_load_state_dict(remote):
    url, fs = remote
    patch_all("torch")
    model = torch.nn.Linear(3, 2)
    torch.save(model.state_dict(), f"{url}/model.pt")
    state = torch.load(f"{url}/model.pt")
    assert torch.equal(state["weight"], model.state_dict()["weight"])


def test_torch_load_keyword_file_argument(remote):
    url, _ = remote
    patch_all("torch")
    torch.save({"step": 3}, f=f"{url}/s.pt")
    assert torch.load(f=f"{url}/s.pt") == {"step": 3}


def test_pil_open_reads_a_remote_image(remote):
    url, fs = remote
    with fs.open("img.png", "wb") as f:
        Image.new("RGB", (8, 4), (255, 0, 0)).save(f, format="PNG")
    patch_all("PIL")
    with Image.open(f"{url}/img.png") as image:
        assert image.size == (8, 4)
        assert image.getpixel((0, 0)) == (255, 0, 0)


def test_pil_open_of_missing_remote_raises_file_not_found(remote):
    url, _ = remote
    patch_all("PIL")
    with pytest.raises(FileNotFoundError):
        Image.open(f"{url}/none.png")
