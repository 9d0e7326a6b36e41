"""Appends through the fsspec bridge where the backend cannot append (S3: the file is
rewritten whole on close). (tensorboardX's event files on ``pfio://`` URLs are in
``tests/clients/test_tensorboardx.py``.)"""

from __future__ import annotations

import io

import pytest

pytest.importorskip("fsspec")


def test_text_append_keeps_what_was_there(bridge, s3):
    bridge.pipe_file(f"{s3}/log.csv", b"a,b\r\n1,2\r\n")
    with bridge.open(f"{s3}/log.csv", "a", newline="") as f:
        f.write("3,4\r\n")
    assert bridge.cat_file(f"{s3}/log.csv") == b"a,b\r\n1,2\r\n3,4\r\n"


def test_binary_append_to_a_missing_file_creates_it(bridge, s3):
    with bridge.open(f"{s3}/new.bin", "ab") as f:
        f.write(b"first")
    with bridge.open(f"{s3}/new.bin", "ab") as f:
        f.write(b"+second")
    assert bridge.cat_file(f"{s3}/new.bin") == b"first+second"


def test_an_error_while_appending_leaves_the_old_file(bridge, s3):
    bridge.pipe_file(f"{s3}/keep.txt", b"old")
    with pytest.raises(RuntimeError), bridge.open(f"{s3}/keep.txt", "a") as f:
        f.write("half")
        raise RuntimeError
    assert bridge.cat_file(f"{s3}/keep.txt") == b"old"


def test_appending_to_a_compressed_file_is_refused(bridge, s3):
    bridge.pipe_file(f"{s3}/x.csv.gz", b"")
    with pytest.raises(io.UnsupportedOperation, match="x.csv.gz.*mode 'w'"):
        bridge.open(f"{s3}/x.csv.gz", "ab", compression="infer")


def test_update_modes_stay_refused(bridge, s3):
    bridge.pipe_file(f"{s3}/u.bin", b"x")
    with pytest.raises(io.UnsupportedOperation):
        bridge.open(f"{s3}/u.bin", "a+b")


def test_backends_that_append_do_it_themselves(bridge, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    with bridge.open(f"pfio://file{tmp_path}/f.txt", "a") as f:
        f.write("two\n")
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"
