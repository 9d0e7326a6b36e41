"""Zip archives on S3: opening costs one request, each member read at most one ranged GET
with at most 64 KiB beyond the member (none where the opening request read it already);
workers read members through a pickled archive."""

from __future__ import annotations

import io
import multiprocessing
import os
import zipfile

import pytest

from pfio.containers.zip import Zip
from pfio.fs.s3 import S3

MEMBER = 64 << 10


@pytest.fixture
def members() -> dict[str, bytes]:
    return {f"dir/m{i:03d}.bin": os.urandom(MEMBER) for i in range(40)}


@pytest.fixture
def fs(s3_env: str, s3_bucket: str, members: dict[str, bytes]) -> S3:
    fs = S3(s3_bucket)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    with fs.open("data.zip", "wb") as f:
        f.write(buf.getvalue())
    return fs


def test_open_costs_one_request(fs: S3, s3_requests) -> None:
    log = s3_requests(fs)
    with fs.open_zip("data.zip") as z:
        assert len(list(z.list("dir"))) == 40
    assert [(method, rng) for method, _, rng in log] == [("GET", f"bytes=-{1 << 20}")]


def test_a_central_directory_beyond_the_first_read_costs_one_more(fs: S3, s3_requests,
                                                                   monkeypatch) -> None:
    monkeypatch.setattr(Zip, "backing_open_options", {"first_fetch": -1024})
    log = s3_requests(fs)
    with fs.open_zip("data.zip") as z:
        assert len(list(z.list("dir"))) == 40
    assert len(log) == 2 and all(r[0] == "GET" for r in log)


@pytest.mark.parametrize("name", ["dir/m000.bin", "dir/m017.bin"])
def test_a_member_read_is_one_bounded_get(fs: S3, members: dict[str, bytes], s3_requests,
                                          name: str) -> None:
    with fs.open_zip("data.zip") as z:
        log = s3_requests(fs)
        with z.open(name, "rb") as f:
            assert f.read() == members[name]
    assert len(log) == 1
    start, stop = map(int, log[0][2][len("bytes="):].split("-"))
    assert stop - start + 1 <= MEMBER + (64 << 10)


def test_a_member_in_the_tail_read_at_opening_costs_no_request(fs: S3, members, s3_requests):
    with fs.open_zip("data.zip") as z:
        log = s3_requests(fs)
        with z.open("dir/m039.bin", "rb") as f:
            assert f.read() == members["dir/m039.bin"]
    assert log == []


def test_missing_member_is_file_not_found(fs: S3) -> None:
    with fs.open_zip("data.zip") as z, pytest.raises(FileNotFoundError):
        z.open("dir/none", "rb")


def _read_member(args: tuple) -> bytes:
    archive, name = args
    with archive.open(name, "rb") as f:
        return f.read()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_read_members_of_pickled_zip(fs: S3, members: dict[str, bytes],
                                            method: str) -> None:
    names = sorted(members)[:8]
    with fs.open_zip("data.zip") as z:
        with multiprocessing.get_context(method).Pool(2) as pool:
            got = pool.map(_read_member, [(z, n) for n in names])
    assert got == [members[n] for n in names]


@pytest.fixture
def tar_fs(s3_env: str, s3_bucket: str, members: dict[str, bytes]) -> S3:
    import tarfile

    fs = S3(s3_bucket)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    with fs.open("data.tar", "wb") as f:
        f.write(buf.getvalue())
    return fs


def test_each_tar_member_read_is_one_bounded_get(tar_fs: S3, members: dict[str, bytes],
                                                s3_requests) -> None:
    try:
        tar = tar_fs.open_tar("data.tar")
    except ImportError:
        pytest.skip("pfio.containers.tar is not available yet")
    with tar:
        log = s3_requests(tar_fs)
        for name in ["dir/m020.bin", "dir/m031.bin"]:  # beyond the first MiB read at opening
            before = len(log)
            with tar.open(name, "rb") as f:
                assert f.read() == members[name]
            assert len(log) == before + 1
            start, stop = map(int, log[-1][2][len("bytes="):].split("-"))
            assert stop - start + 1 <= MEMBER + (64 << 10)
