"""A writer that is never closed publishes nothing: only ``close()`` (or a ``with`` block ending
without an exception) makes what was written visible. A writer dropped unclosed, for example
after an exception raised between ``open`` and ``close``, is aborted by the garbage collector
with a ``ResourceWarning``, on every backend."""

from __future__ import annotations

import gc
import os
import warnings
from collections.abc import Iterator

import pytest

import pfio
from pfio.fs.base import FS

MIB = 1 << 20


@pytest.fixture
def s3_server(moto_server):
    """moto only: what is tested is the writers' machinery, not the server."""
    return moto_server


@pytest.fixture
def s3_engine() -> None:
    """The default engine: what is tested is the writers' machinery, not the engine."""
    return None


@pytest.fixture(params=["local", "mem", "s3"])
def fs(request: pytest.FixtureRequest, tmp_path) -> Iterator[FS]:
    if request.param == "local":
        yield pfio.from_url(str(tmp_path))
    elif request.param == "mem":
        with pfio.from_url(f"mem://dropped-{os.getpid()}-{id(tmp_path)}") as mem:
            yield mem
    else:
        request.getfixturevalue("s3_env")
        bucket = request.getfixturevalue("s3_bucket")
        with pfio.from_url(f"s3://{bucket}", mpu_chunksize=5 * MIB) as s3:
            yield s3


def write_then_fail(fs: FS, name: str, mode: str, data) -> None:
    """Open ``name`` without ``with``, write ``data``, and raise before closing it."""
    f = fs.open(name, mode)
    f.write(data)
    raise RuntimeError("failed before close")


@pytest.mark.parametrize("mode, data", [("wb", b"partial"), ("w", "partial")])
def test_writer_dropped_after_exception_publishes_nothing(fs: FS, mode: str, data) -> None:
    with pytest.warns(ResourceWarning, match="not closed"):
        with pytest.raises(RuntimeError):
            write_then_fail(fs, "f", mode, data)
        gc.collect()
    assert not fs.exists("f")


def test_dropped_writer_keeps_the_old_file(fs: FS) -> None:
    with fs.open("f", "wb") as f:
        f.write(b"old")
    with pytest.warns(ResourceWarning):
        with pytest.raises(RuntimeError):
            write_then_fail(fs, "f", "wb", b"new, partial")
        gc.collect()
    with fs.open("f", "rb") as f:
        assert f.read() == b"old"


def test_dropped_multipart_writer_publishes_nothing(fs: FS) -> None:
    f = fs.open("big", "wb")
    f.write(b"x" * (6 * MIB))  # past the first part of an S3 multipart upload
    with pytest.warns(ResourceWarning):
        del f
        gc.collect()
    assert not fs.exists("big")


def test_closed_writer_publishes(fs: FS) -> None:
    f = fs.open("f", "w")
    f.write("whole")
    f.close()
    del f
    gc.collect()
    with fs.open("f", "r") as f:
        assert f.read() == "whole"


def test_dropped_writer_leaves_no_temporary_file(tmp_path) -> None:
    local = pfio.from_url(str(tmp_path))
    with pytest.warns(ResourceWarning):
        with pytest.raises(RuntimeError):
            write_then_fail(local, "f", "wb", b"partial")
        gc.collect()
    assert os.listdir(tmp_path) == []


def test_a_writer_that_failed_to_open_warns_nothing(tmp_path) -> None:
    local = pfio.from_url(str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(FileNotFoundError):
            local.open("missing/f", "wb")
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
