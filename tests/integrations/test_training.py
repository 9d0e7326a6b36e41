"""Real training from a zip on S3 (moto server), snapshots to S3 each epoch, and a run killed by
SIGKILL in the middle that resumes from the latest snapshot to the same iteration and weights."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import pfio

from .images import write_image_tree

SCRIPTS = Path(__file__).parent / "training"


@pytest.fixture
def zip_on_s3(s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/data/train.zip"
    with pfio.from_url(f"s3://{s3_bucket}/data").open_zip("train.zip", "w") as archive:
        write_image_tree(archive, classes=3, per_class=16, size=16, ext=".jpg")
    return url


def _start(framework, data, checkpoints, result, pause_at=None):
    # (the scripts' directory first, then the caller's path: the tree under test)
    path = [str(SCRIPTS), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    if pause_at is not None:
        env["PAUSE_AT_STEP"] = str(pause_at)
    return subprocess.Popen([sys.executable, str(SCRIPTS / f"train_{framework}.py"), data,
                             checkpoints, str(result)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(proc):
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-3000:]
    return out


def _weights(framework, path):
    if framework == "chainer":
        with np.load(path) as saved:
            return int(saved["iteration"]), {k: saved[k] for k in saved.files if k != "iteration"}
    saved = torch.load(path)
    return saved["iteration"], {k: v.numpy() for k, v in saved["model"].items()}


@pytest.mark.parametrize("framework", ["torch", "ppe", "chainer"])
def test_killed_run_resumes_to_the_same_iteration_and_weights(framework, zip_on_s3, s3_bucket,
                                                             tmp_path):
    steps_per_epoch = 48 // 8
    reference = tmp_path / "reference.out"
    _finish(_start(framework, zip_on_s3, f"s3://{s3_bucket}/ref-ckpt", reference))

    checkpoints = f"s3://{s3_bucket}/ckpt"
    resumed = tmp_path / "resumed.out"
    proc = _start(framework, zip_on_s3, checkpoints, resumed, pause_at=steps_per_epoch + 2)
    lines = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.strip() == "paused":
            break
    assert lines[-2:] == ["epoch 1 done", "paused"], (lines, proc.stderr.read()[-3000:])
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(list(pfio.from_url(checkpoints).list())) == 1  # the snapshot of epoch 1 only

    out = _finish(_start(framework, zip_on_s3, checkpoints, resumed))
    assert f"resumed at step {steps_per_epoch}" in out
    iteration, weights = _weights(framework, resumed)
    ref_iteration, ref_weights = _weights(framework, reference)
    assert iteration == ref_iteration == 2 * steps_per_epoch
    assert weights.keys() == ref_weights.keys()
    for name in weights:
        np.testing.assert_array_equal(weights[name], ref_weights[name], err_msg=name)
