"""Which URLs the patches take: every scheme ``from_url`` opens (built-in, registered,
custom schemes of the INI file, fsspec protocols); other URLs reach the original function
with a warning, once per scheme."""

import logging
import secrets

import cv2
import numpy as np
import pytest

import pfio
from pfio.fs.memory import MemoryFS
from pfio.patches import patch_all
from pfio.patches.targets import is_remote


def _scheme(stem):
    """A scheme name no other test has asked about (answers are kept per process)."""
    return f"{stem}{secrets.token_hex(3)}"


def _png():
    image = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    ok, encoded = cv2.imencode(".png", image)
    assert ok
    return image, encoded.tobytes()


def test_built_in_schemes_are_remote():
    assert is_remote("s3://b/k") and is_remote("MEM://s/x") and is_remote("hdfs://n/p")


def test_local_paths_and_other_types_are_not():
    assert not is_remote("/tmp/x") and not is_remote("dir/a://b")
    assert not is_remote(b"s3://b/k") and not is_remote(3) and not is_remote(None)


def test_a_registered_scheme_is_remote_and_forgotten_when_unregistered():
    scheme = _scheme("patchreg")
    pfio.register_filesystem(scheme, MemoryFS)
    try:
        assert is_remote(f"{scheme}://s/x")
    finally:
        pfio.unregister_filesystem(scheme)
    assert not is_remote(f"{scheme}://s/x")


def test_cv2_reads_a_custom_scheme_of_the_ini_file(ini):
    scheme = _scheme("patchini")
    ini(f"""
        [{scheme}]
        scheme = mem
    """)
    image, png = _png()
    with pfio.from_url("mem://patch-ini-store") as fs, fs.open("img.png", "wb") as f:
        f.write(png)
    patch_all("cv2")
    np.testing.assert_array_equal(cv2.imread(f"{scheme}://patch-ini-store/img.png"), image)


def test_open_reads_an_fsspec_protocol():
    fsspec = pytest.importorskip("fsspec")
    path = f"/patches-{secrets.token_hex(4)}/a.txt"
    fsspec.filesystem("memory").pipe(path, b"from fsspec")
    patch_all("builtins")
    assert is_remote(f"memory://{path}")
    with open(f"memory://{path}", "rb") as f:
        assert f.read() == b"from fsspec"


def test_an_unserved_scheme_warns_once_and_reaches_the_original(caplog):
    scheme = _scheme("nosuch")
    patch_all("cv2")
    with caplog.at_level(logging.WARNING, logger="pfio.patches.targets"):
        assert cv2.imread(f"{scheme}://b/x.png") is None
        assert cv2.imread(f"{scheme}://b/y.png") is None
    warnings = [r for r in caplog.records if scheme in r.getMessage()]
    assert len(warnings) == 1
    assert "no filesystem serves the scheme" in warnings[0].getMessage()
