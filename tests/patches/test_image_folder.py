"""The ImageFolder-style dataset of image_folder.py, written for local disk, run unchanged on
``mem://``, on S3 (moto server) and on zips there, in this process and in 2-worker
DataLoaders under fork, spawn and forkserver."""

import io
import json
import os
import secrets
import subprocess
import sys

import numpy as np
import pytest
import torch
from PIL import Image

from pfio import trace
from pfio.fs.s3 import S3
from pfio.patches import patch_all

from .conftest import worker_env
from .image_folder import ImageFolder

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = ["fork", "spawn", "forkserver"]
#: (class folder, path inside it): a nested folder for os.walk, and a file that is no image
FILES = [("cat", "0.png"), ("cat", "more/1.png"), ("dog", "2.png"), ("dog", "notes.txt")]


def _pixels(index):
    return np.full((3, 4, 3), (index * 40, 255 - index * 40, 7), np.uint8)


def _png(index):
    buffer = io.BytesIO()
    Image.fromarray(_pixels(index)).save(buffer, format="PNG")
    return buffer.getvalue()


def _write_tree(fs):
    """The class folders under ``train/`` and the same in ``train.zip``."""
    def fill(target, prefix):
        for folder, path in FILES:
            data = b"not an image" if path.endswith(".txt") else _png(int(path[-5]))
            with target.open(f"{prefix}{folder}/{path}", "wb") as f:
                f.write(data)

    fill(fs, "train/")
    with fs.open_zip("train.zip", "w") as archive:
        fill(archive, "")


#: what the dataset yields, without the pid: (RGB bytes, size, class index)
EXPECTED = [(_pixels(i).tobytes(), (4, 3), target) for i, target in ((0, 0), (1, 0), (2, 1))]


def _items(loader):
    return [(bytes(data), tuple(int(v) for v in size), int(target), int(pid))
            for data, size, target, pid in loader]


@pytest.fixture(params=["train", "train.zip"])
def root(request, remote):
    url, fs = remote
    _write_tree(fs)
    patch_all()
    return f"{url}/{request.param}"


def test_the_dataset_lists_classes_and_files(root):
    dataset = ImageFolder(root)
    assert dataset.classes == ["cat", "dog"]
    assert [path for path, _ in dataset.samples] == [
        f"{root}/cat/0.png", f"{root}/cat/more/1.png", f"{root}/dog/2.png"]


def test_the_dataset_reads_its_images(root):
    dataset = ImageFolder(root)
    assert [item[:3] for item in _items(dataset)] == EXPECTED


def test_two_fork_workers_read_the_dataset(root):
    loader = torch.utils.data.DataLoader(ImageFolder(root), batch_size=None, num_workers=2,
                                         multiprocessing_context="fork")
    items = _items(loader)
    assert [item[:3] for item in items] == EXPECTED
    assert os.getpid() not in {item[3] for item in items}


def test_second_epoch_reads_the_object_cache(s3_env, s3_bucket, object_cache):
    with S3(s3_bucket) as fs:
        _write_tree(fs)
    patch_all(cache=True)
    dataset = ImageFolder(f"s3://{s3_bucket}/train")
    assert [item[:3] for item in _items(dataset)] == EXPECTED
    trace.enable()
    try:
        assert [item[:3] for item in _items(dataset)] == EXPECTED
        requests = trace.metrics().requests
    finally:
        trace.disable()
    assert ("s3", "GET") not in requests


TRAIN_SCRIPT = """
import json
import sys
import traceback

import torch
from image_folder import ImageFolder


def load(method, roots):
    dataset = torch.utils.data.ConcatDataset([ImageFolder(root) for root in roots])
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=2,
                                         multiprocessing_context=method)
    return [[data.hex(), list(size), int(target), int(pid)]
            for data, size, target, pid in loader]


if __name__ == "__main__":
    import os

    import pfio  # here only: spawned workers run this module without this block

    pfio.patch_all()
    methods, roots = sys.argv[1].split(","), sys.argv[2:]
    runs = {}
    for method in methods:
        try:
            runs[method] = {"items": load(method, roots)}
        except Exception:
            runs[method] = {"error": traceback.format_exc()}
    json.dump({"parent": os.getpid(), "runs": runs}, sys.stdout)
"""


@pytest.fixture(scope="module")
def training_run(s3_server, tmp_path_factory, startup_hook_path):
    """TRAIN_SCRIPT run over the folders and the zip on S3 under every start method, in a
    fresh process (its forkserver is its own) with the S3 settings, an object cache of its
    own, no patches and pfio's startup hook."""
    creds = s3_server.credentials
    bucket = f"pfio-test-{secrets.token_hex(6)}"
    with S3(bucket, endpoint=s3_server.endpoint, aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"],
            region=creds["AWS_DEFAULT_REGION"], create_bucket=True) as fs:
        _write_tree(fs)
    tmp = tmp_path_factory.mktemp("image-folder")
    (tmp / "train.py").write_text(TRAIN_SCRIPT)
    env = worker_env(s3_server, tmp / "xdg", [HERE, *startup_hook_path])
    roots = [f"s3://{bucket}/train", f"s3://{bucket}/train.zip"]
    result = subprocess.run([sys.executable, str(tmp / "train.py"), ",".join(METHODS), *roots],
                            env=env, cwd=tmp, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout)


@pytest.mark.parametrize("method", METHODS)
def test_workers_run_the_dataset_on_s3_and_a_zip_there(training_run, method):
    run = training_run["runs"][method]
    assert "error" not in run, run.get("error")
    items = [(bytes.fromhex(data), tuple(size), target) for data, size, target, _ in run["items"]]
    assert items == EXPECTED + EXPECTED  # the folders, then the zip
    pids = {pid for *_, pid in run["items"]}
    assert len(pids) == 2 and training_run["parent"] not in pids
