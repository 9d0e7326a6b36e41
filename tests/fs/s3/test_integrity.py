"""End-to-end integrity of writes (:mod:`pfio.fs.s3.integrity`): a body damaged on its way
to the server is never published quietly. The damage is done by the fault proxy (one bit
flipped); the servers that check nothing (moto) are caught by the MD5 ETag, those that
check ``Content-MD5`` (Ceph) refuse the body; an echoed checksum that differs and answers
without ETags come from a scripted server (:mod:`..hostile`)."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest

from pfio.fs.s3 import S3, integrity
from pfio.testing.faultproxy import FaultProxy, Request

from ..hostile import HostileServer, Peer, answer

MIB = 1 << 20


def _use(monkeypatch: pytest.MonkeyPatch, server) -> None:
    for name, value in server.credentials.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def fresh_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint is known to check checksums yet."""
    monkeypatch.setattr(integrity, "_verifying", set())


@pytest.fixture(params=["moto", "ceph"])
def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    found = request.getfixturevalue(f"{request.param}_server")
    _use(monkeypatch, found)
    return found


@pytest.fixture
def proxy(server) -> Iterator[FaultProxy]:
    parts = urlsplit(server.endpoint)
    with FaultProxy(parts.hostname, parts.port) as relay:
        yield relay


@pytest.fixture
def bucket(server) -> str:
    from tests.conftest import new_bucket

    return new_bucket(server)


def filesystem(bucket: str, endpoint: str, **options) -> S3:
    fs = S3(bucket, endpoint=endpoint, engine="http", max_attempts=3, mpu_chunksize=5 * MIB,
            **options)
    fs._retry.base = 0.001
    return fs


def is_put(request: Request) -> bool:
    return request.method == "PUT"


def is_part(request: Request) -> bool:
    return request.method == "PUT" and "partNumber=" in request.target


def test_a_put_damaged_on_its_way_is_sent_again(proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    data = os.urandom(MIB)
    proxy.corrupt_next(1, match=is_put)
    with fs.open("f", "wb") as f:
        f.write(data)
    assert proxy.corrupted == 1 and proxy.methods["PUT"] == 2
    with fs.open("f", "rb") as f:
        assert f.read() == data


def test_a_put_damaged_every_time_is_an_oserror(proxy: FaultProxy, bucket: str,
                                                server) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    with fs.open("f", "wb") as f:
        f.write(b"the older object")
    proxy.corrupt_next(10, match=is_put)
    with pytest.raises(OSError, match="BadDigest") as info:
        with fs.open("f", "wb") as f:
            f.write(os.urandom(MIB))
    assert type(info.value) is OSError and info.value.filename.endswith("/f")
    if server.name == "ceph":  # it checks Content-MD5: the damaged bytes were never stored
        with fs.open("f", "rb") as f:
            assert f.read() == b"the older object"
    else:  # moto checks nothing: the error says the object is damaged
        assert "the object at this key is damaged" in str(info.value)


def test_a_part_damaged_every_time_publishes_nothing(proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    proxy.corrupt_next(10, match=is_part)
    with pytest.raises(OSError, match="BadDigest"):  # (StoredBadDigest on moto)
        with fs.open("big", "wb") as f:
            f.write(os.urandom(11 * MIB))
    assert not fs.exists("big")


def test_a_part_damaged_once_is_sent_again(proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    data = os.urandom(11 * MIB)
    proxy.corrupt_next(1, match=is_part)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.corrupted == 1
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_an_object_of_exactly_one_part_is_one_put(proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    data = os.urandom(5 * MIB)
    with fs.open("f", "wb") as f:
        f.write(data[:MIB])
        f.write(data[MIB:])
    assert proxy.methods["PUT"] == 1 and proxy.methods["POST"] == 0
    assert fs.stat("f").etag == hashlib.md5(data).hexdigest()


# -- a scripted server ----------------------------------------------------------------------

class Scripted:
    """Answers PUTs (single or parts), CreateMultipartUpload and completions with the
    headers ``put_fields(body)`` gives; records every request head."""

    def __init__(self, put_fields: Callable[[str], list[str]]) -> None:
        self.put_fields = put_fields
        self.heads: list[str] = []
        self.server = HostileServer(self._script)

    def _script(self, peer: Peer) -> None:
        while True:
            raw = peer.request()
            if not raw:
                return
            text = raw.decode("latin-1")
            self.heads.append(text)
            method, target = text.split(" ")[:2]
            if method == "PUT":
                reply = answer("200 OK", "Content-Length: 0", *self.put_fields(text))
            elif method == "POST" and target.endswith("?uploads"):
                xml = b"<InitiateMultipartUploadResult><UploadId>u1</UploadId>" \
                      b"</InitiateMultipartUploadResult>"
                reply = answer("200 OK", f"Content-Length: {len(xml)}", body=xml)
            elif method == "POST":
                xml = b"<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag>" \
                      b"</CompleteMultipartUploadResult>"
                reply = answer("200 OK", f"Content-Length: {len(xml)}", body=xml)
            else:
                reply = answer("404 Not Found", "Content-Length: 0")
            if not peer.send(reply):
                return


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Scripted]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    made: list[Scripted] = []

    def make(put_fields: Callable[[str], list[str]]) -> Scripted:
        made.append(Scripted(put_fields))
        return made[-1]

    yield make
    for server in made:
        server.server.close()


def header(head: str, name: str) -> str | None:
    for line in head.split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def test_an_echoed_checksum_that_differs_is_an_oserror(scripted) -> None:
    server = scripted(lambda head: ['ETag: "e"', "x-amz-checksum-crc32: AAAAAA=="])
    fs = filesystem("b", server.server.endpoint)
    with pytest.raises(OSError, match="BadDigest"):
        with fs.open("f", "wb") as f:
            f.write(b"payload")
    assert len(server.heads) == 3  # tried three times


def test_an_endpoint_that_echoes_checksums_is_sent_no_md5(scripted) -> None:
    server = scripted(lambda head: ['ETag: "e"', "x-amz-checksum-crc32: "
                                    + header(head, "x-amz-checksum-crc32")])
    fs = filesystem("b", server.server.endpoint)
    for _ in range(2):
        with fs.open("f", "wb") as f:
            f.write(b"payload")
    first, second = server.heads
    md5 = base64.b64encode(hashlib.md5(b"payload").digest()).decode()
    assert header(first, "content-md5") == md5
    assert header(second, "content-md5") is None


def test_a_put_answered_without_an_etag_is_an_oserror(scripted) -> None:
    server = scripted(lambda head: [])
    fs = filesystem("b", server.server.endpoint)
    with pytest.raises(OSError, match="names no ETag"):
        with fs.open("big", "wb") as f:
            f.write(os.urandom(6 * MIB))


def test_parts_of_sse_kms_objects_are_not_taken_for_md5s(scripted) -> None:
    etags = iter(f'ETag: "{i:032x}"' for i in range(1, 10))
    server = scripted(lambda head: [next(etags), "x-amz-server-side-encryption: aws:kms"])
    fs = filesystem("b", server.server.endpoint)
    with fs.open("big", "wb") as f:
        f.write(os.urandom(11 * MIB))
    assert sum(h.startswith("PUT") for h in server.heads) == 3
