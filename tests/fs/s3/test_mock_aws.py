"""PFIO 2.x test suites that mock S3 with moto's in-process ``mock_aws`` keep working:
pfio then moves data with the boto3 engine, which ``mock_aws`` intercepts. This is the one
module of the suite that uses ``mock_aws`` (everything else runs over real HTTP)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

import pytest

from pfio.fs.s3 import S3
from pfio.v2 import from_url

moto = pytest.importorskip("moto")


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("S3_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN",
                 "PFIO_S3_ENGINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "mock-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "mock-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def mocked(aws_env: None) -> Iterator[None]:
    with moto.mock_aws():
        import boto3

        boto3.client("s3").create_bucket(Bucket="mocked")
        yield


def test_the_boto3_engine_is_chosen(mocked: None) -> None:
    assert S3("mocked").engine == "boto3"


def test_the_engine_asked_for_gives_way_to_mock_aws(mocked: None) -> None:
    assert S3("mocked", engine="http").engine == "boto3"


def test_a_filesystem_made_before_mock_aws_follows_it(aws_env: None) -> None:
    fs = S3("mocked")
    assert fs.engine == "http"
    with moto.mock_aws():
        fs.client.create_bucket(Bucket="mocked")
        assert fs.engine == "boto3"
        with fs.open("k", "wb") as f:
            f.write(b"mocked")
        with fs.open("k", "rb") as f:
            assert f.read() == b"mocked"


def test_write_then_read(mocked: None) -> None:
    with from_url("s3://mocked/base") as fs:
        with fs.open("a.txt", "w") as f:
            f.write("hello")
        with fs.open("a.txt", "rb") as f:
            assert f.read() == b"hello"  # PFIO 2.x: binary by default


def test_multipart_write_then_read(mocked: None) -> None:
    data = bytes(range(256)) * (24 << 10)  # 6 MiB: two parts of 5 MiB chunks
    fs = S3("mocked", mpu_chunksize=5 << 20)
    with fs.open("big", "wb") as f:
        f.write(data)
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_listing(mocked: None) -> None:
    fs = S3("mocked")
    for name in ("d/x", "d/y", "top"):
        with fs.open(name, "wb") as f:
            f.write(b"1")
    assert sorted(fs.list()) == ["d/", "top"]
    assert sorted(fs.list("d", recursive=True)) == ["x", "y"]
    assert fs.stat("top").size == 1


def test_zip_members(mocked: None) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("m/one.txt", b"first")
        z.writestr("m/two.txt", b"second")
    fs = S3("mocked")
    with fs.open("data.zip", "wb") as f:
        f.write(buf.getvalue())
    with fs.open_zip("data.zip") as archive:
        with archive.open("m/two.txt", "rb") as f:
            assert f.read() == b"second"
        assert sorted(archive.list("m")) == ["one.txt", "two.txt"]


@pytest.mark.parametrize(("buffering", "kind"), [(-1, io.BufferedReader), (0, io.RawIOBase)])
def test_a_zip_s_fileobj_is_its_backing_file(mocked: None, buffering: int, kind: type) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("file", b"content")
    with S3("mocked").open("data.zip", "wb") as f:
        f.write(buf.getvalue())
    with from_url("s3://mocked/data.zip", buffering=buffering) as archive:
        assert isinstance(archive.fileobj, kind) and zipfile.is_zipfile(archive.fileobj)
        with archive.open("file", "rb") as f:
            assert f.read() == b"content"


def test_missing_object_is_file_not_found(mocked: None) -> None:
    with pytest.raises(FileNotFoundError, match="s3://mocked/nope"):
        S3("mocked").open("nope", "rb")
