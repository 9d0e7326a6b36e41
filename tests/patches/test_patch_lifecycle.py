"""Patching, unpatching and import order, seen through real reads of remote URLs."""

import json
import os
import subprocess
import sys

import cv2
import numpy as np

import pfio
from pfio.patches import patch_all, unpatch_all


def _image():
    image = np.zeros((6, 8, 3), np.uint8)
    image[:, :4] = (10, 20, 30)
    return image


def _put_png(fs, name):
    ok, encoded = cv2.imencode(".png", _image())
    assert ok
    with fs.open(name, "wb") as f:
        f.write(encoded.tobytes())


def test_after_unpatch_all_cv2_no_longer_reads_urls(remote):
    url, fs = remote
    _put_png(fs, "a.png")
    patch_all("cv2")
    assert cv2.imread(f"{url}/a.png") is not None
    unpatch_all()
    assert cv2.imread(f"{url}/a.png") is None  # OpenCV's own answer for a path it cannot read


def test_patched_block_reads_urls_inside_only(remote):
    url, fs = remote
    _put_png(fs, "a.png")
    with pfio.patched(["cv2"]):
        np.testing.assert_array_equal(cv2.imread(f"{url}/a.png"), _image())
    assert cv2.imread(f"{url}/a.png") is None


IMPORT_AFTER_PATCH = """
import json
import sys

import pfio

pfio.patch_all()
assert "cv2" not in sys.modules
import cv2

print(json.dumps(cv2.imread(sys.argv[1]).tolist()))
"""


def test_cv2_imported_after_patch_all_reads_s3_urls(s3_env, s3_bucket, tmp_path):
    with pfio.from_url(f"s3://{s3_bucket}/late") as fs:
        _put_png(fs, "a.png")
    (tmp_path / "script.py").write_text(IMPORT_AFTER_PATCH)
    env = {k: v for k, v in os.environ.items() if k != "PFIO_PATCHES"}
    result = subprocess.run([sys.executable, str(tmp_path / "script.py"),
                             f"s3://{s3_bucket}/late/a.png"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-4000:]
    np.testing.assert_array_equal(np.array(json.loads(result.stdout), np.uint8), _image())
