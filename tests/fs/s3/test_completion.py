"""Completing a multipart upload is not idempotent: when its answer is lost, the writer looks
at the object instead of guessing, and never aborts an upload that may have been completed
without looking first.

The faults come from a small relay written here (``CompletionProxy``): it passes requests to
the S3 server and does what it is told with each CompleteMultipartUpload (``POST
...?uploadId=``): apply it and lose the answer (the connection closes before the client
reads a byte), answer ``NoSuchUpload`` without passing it on (as AWS answers the resend of
a completed upload), or drop it unsent.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import boto3
import pytest

from pfio.fs.s3 import S3
from pfio.fs.s3.engine import Head, Part
from pfio.fs.s3.writer import Completion
from pfio.testing.http_messages import MessageReader, PeerClosed, header_fields

from ..hostile import LoopbackServer, shut

MIB = 1 << 20
NO_SUCH_UPLOAD = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code>'
                  b'<Message>The specified upload does not exist.</Message></Error>')
INTERNAL = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
            b'<Message>scripted</Message></Error>')


def _body(reader: MessageReader, fields: dict[str, str]) -> bytes:
    if "chunked" in fields.get("transfer-encoding", ""):
        return reader.chunked()
    return reader.exactly(int(fields.get("content-length", 0)))


def _answer(status: int, body: bytes) -> bytes:
    return (f"HTTP/1.1 {status} Scripted\r\nContent-Type: application/xml\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


class CompletionProxy(LoopbackServer):
    """A relay to ``upstream`` on 127.0.0.1 (``endpoint``); see the module documentation.

    ``completions`` is the list of what to do with the next CompleteMultipartUpload
    requests, in order (``"apply-and-lose"``, ``"no-such-upload"``, ``"drop"``; the others
    pass); ``failing_heads`` HEADs after the first lost answer are answered 500. ``seen``
    holds the method and target of every request.
    """

    def __init__(self, upstream: tuple[str, int], completions: list[str],
                 failing_heads: int = 0) -> None:
        self.upstream = upstream
        self.completions = list(completions)
        self.failing_heads = failing_heads
        self.lost = 0
        self.seen: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        super().__init__()
        self.endpoint = f"http://{self.authority}"

    def _action(self, method: str, target: str) -> str:
        with self._lock:
            self.seen.append((method, target))
            if method == "POST" and "uploadId=" in target and self.completions:
                action = self.completions.pop(0)
                if action == "apply-and-lose":
                    self.lost += 1
                return action
            if method == "HEAD" and self.lost and self.failing_heads:
                self.failing_heads -= 1
                return "fail"
            return "pass"

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        self.sockets.append(upstream)
        reader, answers = MessageReader(client), MessageReader(upstream)
        try:
            while True:
                head = reader.head()
                fields = header_fields(head)
                if fields.get("expect", "").lower() == "100-continue":
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    head = b"\r\n".join(line for line in head.split(b"\r\n")
                                        if not line.lower().startswith(b"expect:"))
                body = _body(reader, fields)
                method, target = head.decode("latin-1").split(" ")[:2]
                action = self._action(method, target)
                if action == "drop":
                    return
                if action == "no-such-upload":
                    client.sendall(_answer(404, NO_SUCH_UPLOAD))
                    continue
                if action == "fail":
                    client.sendall(_answer(500, INTERNAL))
                    continue
                upstream.sendall(head + body)
                answer = answers.head()
                while answer.split(b" ", 2)[1].startswith(b"1"):
                    answer = answers.head()
                got = header_fields(answer)
                status = int(answer.split(b" ", 2)[1])
                if method == "HEAD" or status in (204, 304):
                    rest = b""
                elif "chunked" in got.get("transfer-encoding", "") or "content-length" in got:
                    rest = _body(answers, got)
                else:
                    rest = answers.until_closed()
                if action == "apply-and-lose":
                    return  # applied by the server; the client never hears of it
                client.sendall(answer + rest)
                if "content-length" not in got and "chunked" not in \
                        got.get("transfer-encoding", "") and method != "HEAD":
                    return
        except (PeerClosed, OSError):
            return
        finally:
            for sock in (client, upstream):
                shut(sock)

    def aborts(self) -> list[str]:
        """The targets of the AbortMultipartUpload requests seen."""
        return [target for method, target in self.seen
                if method == "DELETE" and "uploadId=" in target]


@pytest.fixture
def relay(s3_env: str) -> Iterator[type[CompletionProxy]]:
    """``relay(completions, failing_heads=0)`` makes a :class:`CompletionProxy` in front
    of the test server (closed after the test)."""
    parts = urlsplit(s3_env)
    made: list[CompletionProxy] = []

    def make(completions: list[str], failing_heads: int = 0) -> CompletionProxy:
        proxy = CompletionProxy((parts.hostname, parts.port), completions, failing_heads)
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.close()


def _client(server) -> object:
    creds = server.credentials
    return boto3.client("s3", endpoint_url=server.endpoint,
                        region_name=creds["AWS_DEFAULT_REGION"],
                        aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])


def _uploads(server, bucket: str) -> list:
    return _client(server).list_multipart_uploads(Bucket=bucket).get("Uploads", [])


def _writer_fs(bucket: str, endpoint: str, **options: object) -> S3:
    fs = S3(bucket, endpoint=endpoint, mpu_chunksize=5 * MIB, **options)
    fs._retry.base = 0.001
    return fs


DATA_SIZE = 11 * MIB


@pytest.fixture(scope="module")
def data() -> bytes:
    return os.urandom(DATA_SIZE)


def test_a_completion_applied_with_its_answer_lost_then_no_such_upload_succeeds(
        s3_server, s3_bucket: str, relay, data: bytes) -> None:
    proxy = relay(["apply-and-lose", "no-such-upload"])
    fs = _writer_fs(s3_bucket, proxy.endpoint)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.lost == 1 and proxy.completions == []  # the resend was told NoSuchUpload
    assert proxy.aborts() == []
    direct = S3(s3_bucket, endpoint=s3_server.endpoint)
    with direct.open("big", "rb") as f:
        assert f.read() == data
    assert _uploads(s3_server, s3_bucket) == []


def test_a_completion_whose_answer_is_lost_is_resent_or_checked(
        s3_server, s3_bucket: str, relay, data: bytes) -> None:
    proxy = relay(["apply-and-lose"])  # the resend reaches the server (which answers 200)
    fs = _writer_fs(s3_bucket, proxy.endpoint)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.lost == 1 and proxy.aborts() == []
    with S3(s3_bucket, endpoint=s3_server.endpoint).open("big", "rb") as f:
        assert f.read() == data


def test_a_completion_that_never_arrives_fails_and_is_aborted(
        s3_server, s3_bucket: str, relay, data: bytes) -> None:
    proxy = relay(["drop"] * 20)
    fs = _writer_fs(s3_bucket, proxy.endpoint, max_attempts=3)
    with pytest.raises(OSError, match="nothing was published") as info:
        with fs.open("big", "wb") as f:
            f.write(data)
    assert type(info.value) is OSError and "s3://" in str(info.value)
    assert not S3(s3_bucket, endpoint=s3_server.endpoint).exists("big")
    assert len(proxy.aborts()) == 1  # looked at, found nothing: the upload is aborted
    assert _uploads(s3_server, s3_bucket) == []


def test_an_upload_that_may_be_complete_is_not_aborted_unchecked(
        s3_server, s3_bucket: str, relay, data: bytes, caplog) -> None:
    proxy = relay(["apply-and-lose", "no-such-upload"], failing_heads=100)
    fs = _writer_fs(s3_bucket, proxy.endpoint, max_attempts=2)
    with caplog.at_level(logging.WARNING, logger="pfio"), \
            pytest.raises(OSError, match="could not be checked") as info:
        with fs.open("big", "wb") as f:
            f.write(data)
    assert "may or may not be published" in str(info.value)
    assert proxy.aborts() == []
    assert "not aborting the multipart upload" in caplog.text
    with S3(s3_bucket, endpoint=s3_server.endpoint).open("big", "rb") as f:
        assert f.read() == data  # (it was completed)


def test_an_upload_aborted_by_someone_else_is_not_taken_for_ours(
        s3_server, s3_bucket: str, s3_env: str, data: bytes) -> None:
    fs = _writer_fs(s3_bucket, s3_env)
    with fs.open("big", "wb") as f:
        f.write(b"an older object")
    client = _client(s3_server)

    parts: list[str] = []  # (hooks outlive the test: this one acts once)

    def abort_before_completing(method: str, path: str, headers: dict) -> None:
        if not path.startswith(f"/{s3_bucket}/") or len(parts) > 2 or \
                headers.get("content-length") == "1":  # (the probe: test_s3_integrity.py)
            return
        if method == "PUT":
            parts.append(path)
        elif method == "POST" and len(parts) == 2:  # the completion, after both parts
            parts.append(path)
            for upload in client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", []):
                client.abort_multipart_upload(Bucket=s3_bucket, Key=upload["Key"],
                                              UploadId=upload["UploadId"])

    fs.connection.add_request_hook(abort_before_completing)
    f = fs.open("big", "wb")
    f.write(data[:10 * MIB])  # two whole parts; closing sends the second, completes
    with pytest.raises(OSError, match=r"another object \(ETag"):
        f.close()
    with fs.open("big", "rb") as f:
        assert f.read() == b"an older object"


def test_the_expected_etag_is_the_servers(s3_server, s3_bucket: str, s3_env: str,
                                          data: bytes, monkeypatch) -> None:
    fs = _writer_fs(s3_bucket, s3_env)
    seen: list[Completion] = []
    real = Completion.complete

    def complete(self: Completion) -> None:
        seen.append(self)
        real(self)

    monkeypatch.setattr(Completion, "complete", complete)
    with fs.open("big", "wb") as f:
        f.write(data)
    head = fs._head("big")
    assert head is not None
    assert head.etag.strip('"') == seen[0].expected_etag()
    assert seen[0].is_ours(head) and seen[0].size == len(data)


def test_parts_without_md5_etags_fall_back_to_size_and_count(s3_env: str) -> None:
    completion = Completion(S3("b")._connection, "k", "upload")
    completion.add(Part(number=1, etag='"not-an-md5"'), 5)
    completion.add(Part(number=2, etag='"also-not"'), 3)
    assert completion.expected_etag() is None
    assert completion.is_ours(Head(etag='"0123abcd-2"', size=8))
    assert not completion.is_ours(Head(etag='"0123abcd-2"', size=9))
    assert not completion.is_ours(Head(etag='"0123abcd-3"', size=8))
    assert not completion.is_ours(Head(etag='"0123abcd"', size=8))


def test_md5_part_etags_must_match_exactly(s3_env: str) -> None:
    completion = Completion(S3("b")._connection, "k", "upload")
    completion.add(Part(number=1, etag='"' + "ab" * 16 + '"'), 5)
    expected = completion.expected_etag()
    assert expected is not None and expected.endswith("-1")
    assert completion.is_ours(Head(etag=f'"{expected}"', size=1))
    assert not completion.is_ours(Head(etag='"' + "cd" * 16 + '-1"', size=5))
