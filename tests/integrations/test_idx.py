"""IDX (MNIST-format) files on any URL: pfio.integrations.idx and its torch face."""

from __future__ import annotations

import gzip
import os
import pickle
import struct
import uuid

import numpy as np
import pytest

import pfio
from pfio.integrations.idx import IDXDataset, IDXFile

COUNT = 50
RNG = np.random.default_rng(0)
IMAGES = RNG.integers(0, 256, size=(COUNT, 28, 28), dtype=np.uint8)
LABELS = RNG.integers(0, 10, size=COUNT, dtype=np.uint8)


def idx_bytes(array: np.ndarray) -> bytes:
    """An IDX file of ``array`` (uint8, int16, int32, float32 or float64)."""
    codes = {"u1": 0x08, "i1": 0x09, "i2": 0x0B, "i4": 0x0C, "f4": 0x0D, "f8": 0x0E}
    code = codes[array.dtype.str[1:]]
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


@pytest.fixture(params=["local", "mem", "s3"])
def base(request, tmp_path):
    """A writable base URL: a local directory, mem://, or S3 on the test moto server."""
    if request.param == "local":
        return str(tmp_path / "data")
    if request.param == "mem":
        return f"mem://idx-{uuid.uuid4().hex}"
    request.getfixturevalue("s3_env")
    return f"s3://{request.getfixturevalue('s3_bucket')}/idx"


def put(base: str, name: str, data: bytes) -> str:
    fs = pfio.from_url(base, create=True)
    with fs.open(name, "wb") as f:
        f.write(data)
    return f"{base}/{name}"


def mnist(base: str, gzipped: bool) -> tuple[str, str]:
    pack = gzip.compress if gzipped else bytes
    suffix = ".gz" if gzipped else ""
    return (put(base, "images-idx3-ubyte" + suffix, pack(idx_bytes(IMAGES))),
            put(base, "labels-idx1-ubyte" + suffix, pack(idx_bytes(LABELS))))


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_items_and_labels(base, tmp_path, gzipped):
    images, labels = mnist(base, gzipped)
    dataset = IDXDataset(images, labels, cache_dir=str(tmp_path / "cache"))
    assert len(dataset) == COUNT
    for i in (0, 17, COUNT - 1):
        image, label = dataset[i]
        np.testing.assert_array_equal(image, IMAGES[i])
        assert image.dtype == np.uint8
        assert label == int(LABELS[i]) and isinstance(label, int)


def test_negative_index(base, tmp_path):
    dataset = IDXDataset(*mnist(base, False), cache_dir=str(tmp_path))
    image, label = dataset[-1]
    np.testing.assert_array_equal(image, IMAGES[-1])
    assert label == int(LABELS[-1])


def test_index_out_of_range(base, tmp_path):
    dataset = IDXDataset(*mnist(base, False), cache_dir=str(tmp_path))
    with pytest.raises(IndexError):
        dataset[COUNT]


def test_plain_file_is_read_by_ranges(tmp_path):
    url = put(str(tmp_path / "d"), "images", idx_bytes(IMAGES))
    f = IDXFile(url, cache_dir=str(tmp_path / "cache"))
    f.read(3)
    # one item read: the shared file stops right after item 3, nothing was copied aside
    assert f._file.tell() == f.header.offset + 4 * 28 * 28
    assert not os.path.exists(tmp_path / "cache")


def test_gzip_is_decompressed_once_into_the_cache(tmp_path):
    url = put(str(tmp_path / "d"), "images.gz", gzip.compress(idx_bytes(IMAGES)))
    cache = tmp_path / "cache"
    first = IDXFile(url, cache_dir=str(cache))
    files = sorted(os.listdir(cache))
    assert len(files) == 1 and files[0].endswith(".idx")
    mtime = os.stat(cache / files[0]).st_mtime_ns
    second = IDXFile(url, cache_dir=str(cache))
    assert os.stat(cache / files[0]).st_mtime_ns == mtime
    np.testing.assert_array_equal(second.read(5), first.read(5))


def test_gzip_detected_by_magic_without_extension(tmp_path):
    url = put(str(tmp_path / "d"), "images", gzip.compress(idx_bytes(IMAGES)))
    np.testing.assert_array_equal(IDXFile(url, cache_dir=str(tmp_path / "c")).read(2), IMAGES[2])


def test_changed_source_gets_a_new_cache_entry(tmp_path):
    cache = tmp_path / "cache"
    url = put(str(tmp_path / "d"), "images.gz", gzip.compress(idx_bytes(IMAGES)))
    IDXFile(url, cache_dir=str(cache))
    put(str(tmp_path / "d"), "images.gz", gzip.compress(idx_bytes(IMAGES[:10])))
    assert len(IDXFile(url, cache_dir=str(cache))) == 10
    assert len(os.listdir(cache)) == 2


def test_default_cache_dir_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    url = put(str(tmp_path / "d"), "images.gz", gzip.compress(idx_bytes(IMAGES)))
    IDXFile(url)
    assert len(os.listdir(tmp_path / "xdg" / "pfio" / "idx")) == 1


@pytest.mark.parametrize("dtype", ["i1", ">i2", ">i4", ">f4", ">f8"])
def test_other_idx_types(tmp_path, dtype):
    array = (np.arange(24).reshape(4, 3, 2) - 10).astype(dtype)
    url = put(str(tmp_path / "d"), "x", idx_bytes(array))
    f = IDXFile(url)
    assert f.header.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(f.read(2), array[2])
    np.testing.assert_array_equal(f.read_all(), array)


def test_pickle_carries_no_open_file(base, tmp_path):
    dataset = IDXDataset(*mnist(base, True), cache_dir=str(tmp_path))
    dataset[0]
    data = pickle.dumps(dataset)
    assert len(data) < 2000
    clone = pickle.loads(data)
    np.testing.assert_array_equal(clone[7][0], IMAGES[7])


def test_not_an_idx_file(tmp_path):
    url = put(str(tmp_path / "d"), "junk", b"hello, world")
    with pytest.raises(ValueError, match="not an IDX file"):
        IDXFile(url)


def test_truncated_idx_file(tmp_path):
    url = put(str(tmp_path / "d"), "short", idx_bytes(IMAGES)[:-10])
    with pytest.raises(ValueError, match="truncated IDX file"):
        IDXFile(url)


def test_corrupt_gzip_names_the_file(tmp_path):
    url = put(str(tmp_path / "d"), "bad.gz", gzip.compress(idx_bytes(IMAGES))[:200])
    with pytest.raises(OSError, match="truncated gzip stream") as info:
        IDXFile(url, cache_dir=str(tmp_path / "cache"))
    assert info.value.filename.endswith("bad.gz")
    assert os.listdir(tmp_path / "cache") == []


def test_count_mismatch(tmp_path):
    base = str(tmp_path / "d")
    images = put(base, "i", idx_bytes(IMAGES))
    labels = put(base, "l", idx_bytes(LABELS[:3]))
    with pytest.raises(ValueError, match="labels"):
        IDXDataset(images, labels)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        IDXFile(str(tmp_path / "nothing"))


def test_torch_dataset_loader(tmp_path):
    torch = pytest.importorskip("torch")
    from pfio.integrations.torch import IDXDataset as TorchIDX

    dataset = TorchIDX(*mnist(str(tmp_path / "d"), True), cache_dir=str(tmp_path / "cache"))
    assert isinstance(dataset, torch.utils.data.Dataset)
    loader = torch.utils.data.DataLoader(dataset, batch_size=10, num_workers=2)
    images, labels = next(iter(loader))
    assert images.shape == (10, 28, 28)
    assert labels.tolist() == LABELS[:10].tolist()
