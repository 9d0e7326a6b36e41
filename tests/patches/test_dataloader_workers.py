"""A 2-worker DataLoader whose dataset calls ``cv2.imread`` on ``s3://`` URLs (plain objects
and zip members), with cv2 patched in the parent process only, under each start method.

Neither the dataset module nor what the workers import of the training script imports
pfio: the workers get the patches from pfio's startup hook (``pfio-patches.pth``), which
applies those that the parent exported in ``PFIO_PATCHES``.

The parent is a training script run in a fresh Python process, so that the forkserver it
starts is its own (one that earlier tests started would have the environment of their time).
To pay the imports of torch and OpenCV once, one run loads the data under the three start
methods in turn; each test checks one of them.
"""

import json
import os
import secrets
import subprocess
import sys

import cv2
import numpy as np
import pytest

from pfio.fs.s3 import S3

from .conftest import worker_env

#: the directory of imread_dataset.py, which the workers import
HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = ["fork", "spawn", "forkserver"]

TRAIN_SCRIPT = """
import json
import os
import sys
import traceback

import torch
from imread_dataset import ImreadDataset


def load(method, urls):
    loader = torch.utils.data.DataLoader(ImreadDataset(urls), batch_size=None, num_workers=2,
                                         multiprocessing_context=method)
    return [[index, image.tolist(), pid] for index, image, pid in loader]


if __name__ == "__main__":
    import pfio  # here only: spawned workers run this module without this block

    methods, urls = sys.argv[1].split(","), sys.argv[2:]
    pfio.patch_all(["cv2"])
    runs = {}
    for method in methods:
        try:
            runs[method] = {"items": load(method, urls)}
        except Exception:
            runs[method] = {"error": traceback.format_exc()}
    json.dump({"parent": os.getpid(), "runs": runs}, sys.stdout)
"""


def _image(index):
    image = np.zeros((4, 6, 3), np.uint8)
    image[:, :3] = (index * 50, 100, 200 - index * 30)
    image[0, 0] = (255, 255, index)
    return image


def _png(image):
    ok, encoded = cv2.imencode(".png", image)
    assert ok
    return encoded.tobytes()


def _write_images(fs):
    """Four PNG images, two as objects and two as members of a zip: their paths."""
    for index in (0, 1):
        with fs.open(f"img{index}.png", "wb") as f:
            f.write(_png(_image(index)))
    with fs.open_zip("shard.zip", "w") as archive:
        for index in (2, 3):
            with archive.open(f"images/img{index}.png", "wb") as f:
                f.write(_png(_image(index)))
    return ["img0.png", "img1.png", "shard.zip/images/img2.png", "shard.zip/images/img3.png"]


@pytest.fixture(scope="module")
def training_run(s3_server, tmp_path_factory, startup_hook_path):
    """The images' URLs and the output of TRAIN_SCRIPT run over them under every start
    method. The script's environment holds the S3 settings (explicitly: this fixture outlives
    ``s3_env``), an object cache directory of its own, no patches, and the startup hook."""
    creds = s3_server.credentials
    bucket = f"pfio-test-{secrets.token_hex(6)}"
    with S3(bucket, prefix="train", endpoint=s3_server.endpoint,
            aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"],
            region=creds["AWS_DEFAULT_REGION"], create_bucket=True) as fs:
        urls = [f"s3://{bucket}/train/{path}" for path in _write_images(fs)]
    tmp = tmp_path_factory.mktemp("training")
    (tmp / "train.py").write_text(TRAIN_SCRIPT)
    env = worker_env(s3_server, tmp / "xdg", [HERE, *startup_hook_path])
    result = subprocess.run([sys.executable, str(tmp / "train.py"), ",".join(METHODS), *urls],
                            env=env, cwd=tmp, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-4000:]
    return urls, json.loads(result.stdout)


@pytest.mark.parametrize("method", METHODS)
def test_workers_read_s3_images_through_the_inherited_cv2_patch(training_run, method):
    urls, out = training_run
    run = out["runs"][method]
    assert "error" not in run, run.get("error")
    assert sorted(index for index, _, _ in run["items"]) == list(range(len(urls)))
    for index, pixels, _ in run["items"]:
        np.testing.assert_array_equal(np.array(pixels, np.uint8), _image(index))
    pids = {pid for _, _, pid in run["items"]}
    assert len(pids) == 2 and out["parent"] not in pids


FORKSERVER_STARTED_FIRST = """
import logging
import multiprocessing

import pfio

if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    context = multiprocessing.get_context("forkserver")
    with context.Pool(1) as pool:  # an earlier pool (or DataLoader) starts the forkserver
        pool.map(abs, [0])
    pfio.patch_all(["builtins"])
"""


def test_patching_after_the_forkserver_started_warns(tmp_path):
    # its children keep the environment (PFIO_PATCHES) of the forkserver's start
    (tmp_path / "script.py").write_text(FORKSERVER_STARTED_FIRST)
    env = {k: v for k, v in os.environ.items() if k != "PFIO_PATCHES"}
    result = subprocess.run([sys.executable, str(tmp_path / "script.py")], env=env,
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "started its multiprocessing forkserver earlier" in result.stderr
