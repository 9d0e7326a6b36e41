"""Answers that complete a write or a copy are read strictly: a ``200`` whose body is not
the result it should be (whitespace, truncated XML, another element) is a server error,
retried; after the retries the writer or the copy looks at the object instead of taking
the answer for done, and ``rename`` deletes its source only once the copy is confirmed.

The answers come from the fault proxy in front of the moto server: answered in its place
(the request never reaches the server) or rewritten on their way back (the server applied
the request)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from pfio.fs.s3 import S3
from pfio.testing.faultproxy import Answer, FaultProxy, Request

MIB = 1 << 20


@pytest.fixture
def proxy(moto_server, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    """A fault proxy in front of the moto server, its credentials in the environment."""
    for name, value in moto_server.credentials.items():
        monkeypatch.setenv(name, value)
    parts = urlsplit(moto_server.endpoint)
    with FaultProxy(parts.hostname, parts.port) as relay:
        yield relay


@pytest.fixture
def bucket(moto_server) -> str:
    from tests.conftest import new_bucket

    return new_bucket(moto_server)


def filesystem(bucket: str, endpoint: str, engine: str = "http") -> S3:
    fs = S3(bucket, endpoint=endpoint, engine=engine, max_attempts=3, mpu_chunksize=5 * MIB)
    fs._retry.base = 0.001
    return fs


def is_copy(request: Request) -> bool:
    return request.method == "PUT" and "x-amz-copy-source" in request.headers


def is_completion(request: Request) -> bool:
    return request.method == "POST" and "uploadId=" in request.target


def unreadable(body: bytes):
    def rewrite(answer: Answer) -> None:
        answer.body = body
        answer.set("Content-Length", str(len(body)))
    return rewrite


@pytest.mark.parametrize("body", [b"   \n  ", b"<?xml version='1.0'?><CopyObjectResult><ET",
                                  b"<Unrelated/>"])
def test_an_unreadable_copy_answer_is_retried(proxy: FaultProxy, bucket: str,
                                              body: bytes) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    with fs.open("src", "wb") as f:
        f.write(b"payload")
    proxy.fail_next(1, status=200, body=body, match=is_copy)
    fs.rename("src", "dst")
    assert proxy.failed == 1
    with fs.open("dst", "rb") as f:
        assert f.read() == b"payload"
    assert not fs.exists("src")


@pytest.mark.parametrize("engine", ["http", "boto3"])
def test_rename_keeps_its_source_when_no_copy_is_confirmed(proxy: FaultProxy, bucket: str,
                                                           engine: str) -> None:
    fs = filesystem(bucket, proxy.endpoint, engine)
    with fs.open("src", "wb") as f:
        f.write(b"payload")
    proxy.fail_next(10, status=200, body=b"<Unrelated/>" if engine == "boto3" else b"  ",
                    match=is_copy)
    with pytest.raises(OSError, match="nothing was copied") as info:
        fs.rename("src", "dst")
    assert type(info.value) is OSError and info.value.filename.endswith("/dst")
    with fs.open("src", "rb") as f:
        assert f.read() == b"payload"
    assert not fs.exists("dst")


def test_a_copy_made_whose_answers_were_unreadable_is_confirmed_by_its_head(
        proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    with fs.open("src", "wb") as f:
        f.write(b"payload")
    proxy.rewrite_next(10, unreadable(b"\n"), statuses=(200,), match=is_copy)
    fs.rename("src", "dst")
    assert proxy.rewritten == 3  # every try applied, none answered
    with fs.open("dst", "rb") as f:
        assert f.read() == b"payload"
    assert not fs.exists("src")


def test_a_copy_whose_destination_cannot_be_told_keeps_the_source(
        proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    with fs.open("src", "wb") as f:
        f.write(b"payload")
    with fs.open("dst", "wb") as f:
        f.write(b"another")  # the same size, another ETag
    proxy.fail_next(10, status=200, body=b"", match=is_copy)
    with pytest.raises(OSError, match="the outcome is unknown"):
        fs.rename("src", "dst")
    assert fs.exists("src")


@pytest.mark.parametrize("engine", ["http", "boto3"])
def test_a_completion_answered_without_its_result_publishes_nothing(
        proxy: FaultProxy, bucket: str, engine: str) -> None:
    fs = filesystem(bucket, proxy.endpoint, engine)
    proxy.fail_next(10, status=200, body=b"<Unrelated/>" if engine == "boto3" else b" \n ",
                    match=is_completion)
    with pytest.raises(OSError, match="nothing was published") as info:
        with fs.open("big", "wb") as f:
            f.write(os.urandom(6 * MIB))
    assert type(info.value) is OSError
    assert not fs.exists("big")


def test_a_completion_applied_with_unreadable_answers_is_checked(
        proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    data = os.urandom(6 * MIB)
    proxy.rewrite_next(10, unreadable(b"<CompleteMultipartUploadResult><Loc"),
                       statuses=(200,), match=is_completion)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.rewritten >= 1
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_an_error_inside_a_200_delete_answer_is_not_taken_for_done(
        proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    for name in ("d/a", "d/b"):
        with fs.open(name, "wb") as f:
            f.write(b"x")
    proxy.fail_next(10, status=200, body=b"", match=lambda r: r.target.endswith("?delete"))
    with pytest.raises(OSError, match="UnreadableAnswer"):
        fs.remove("d", recursive=True)


def is_create(request: Request) -> bool:
    return request.method == "POST" and request.target.endswith("?uploads")


def server_error(answer: Answer) -> None:
    answer.status, answer.reason = 500, "Internal Server Error"
    unreadable(b"<Error><Code>InternalError</Code></Error>")(answer)


@pytest.mark.parametrize("engine", ["http", "boto3"])
def test_an_upload_started_by_a_try_whose_answer_was_lost_is_aborted(
        proxy: FaultProxy, bucket: str, engine: str, moto_server) -> None:
    import boto3

    fs = filesystem(bucket, proxy.endpoint, engine)
    proxy.rewrite_next(1, server_error, statuses=(200,), match=is_create)
    data = os.urandom(6 * MIB)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.rewritten == 1
    client = boto3.client("s3", endpoint_url=moto_server.endpoint)
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    with fs.open("big", "rb") as f:
        assert f.read() == data
