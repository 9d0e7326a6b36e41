"""End-to-end integrity of writes (:mod:`pfio.fs.s3.integrity`): a body damaged on its way
to the server is never published quietly. The damage is done by the fault proxy (one bit
flipped); the servers that check nothing (moto) are caught by the MD5 ETag, those that
check ``Content-MD5`` or a signed SHA-256 (Ceph) refuse the body; an echoed checksum that
differs and answers without ETags come from a scripted server (:mod:`..hostile`). Which
digest goes to which endpoint (the probe of signed payloads, ``write_digest``) is seen in
the headers the engine sends."""

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
    """No endpoint is known to check checksums or signed hashes yet."""
    monkeypatch.setattr(integrity, "_verifying", set())
    monkeypatch.setattr(integrity, "_signed", {})
    monkeypatch.delenv("PFIO_S3_WRITE_DIGEST", raising=False)


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


@pytest.fixture(params=["md5", "sha256"])
def digest(request: pytest.FixtureRequest, server) -> str:
    """The digest the damage tests send: ``Content-MD5``, or the signed SHA-256 (moto does
    not check the latter: forcing it there is the caller's choice, untested)."""
    if request.param == "sha256" and server.name == "moto":
        pytest.skip("moto does not check signed payload hashes")
    return request.param


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


def is_probe(request: Request) -> bool:
    return is_part(request) and request.headers.get("content-length") == "1"


#: what a server that refuses a damaged body answers (Content-MD5 or the signed hash), or
#: what pfio finds in the ETag of one that stored it
DAMAGED = "BadDigest|XAmzContentSHA256Mismatch"


def test_a_put_damaged_on_its_way_is_sent_again(proxy: FaultProxy, bucket: str,
                                                digest: str) -> None:
    fs = filesystem(bucket, proxy.endpoint, write_digest=digest)
    data = os.urandom(MIB)
    proxy.corrupt_next(1, match=is_put)
    with fs.open("f", "wb") as f:
        f.write(data)
    assert proxy.corrupted == 1 and proxy.methods["PUT"] == 2
    with fs.open("f", "rb") as f:
        assert f.read() == data


def test_a_put_damaged_every_time_is_an_oserror(proxy: FaultProxy, bucket: str,
                                                server, digest: str) -> None:
    fs = filesystem(bucket, proxy.endpoint, write_digest=digest)
    with fs.open("f", "wb") as f:
        f.write(b"the older object")
    proxy.corrupt_next(10, match=is_put)
    with pytest.raises(OSError, match=DAMAGED) as info:
        with fs.open("f", "wb") as f:
            f.write(os.urandom(MIB))
    assert type(info.value) is OSError and info.value.filename.endswith("/f")
    if server.name == "ceph":  # it checks both digests: the damaged bytes were never stored
        with fs.open("f", "rb") as f:
            assert f.read() == b"the older object"
    else:  # moto checks nothing: the error says the object is damaged
        assert "the object at this key is damaged" in str(info.value)


def test_a_part_damaged_every_time_publishes_nothing(proxy: FaultProxy, bucket: str,
                                                     digest: str) -> None:
    fs = filesystem(bucket, proxy.endpoint, write_digest=digest)
    proxy.corrupt_next(10, match=is_part)
    with pytest.raises(OSError, match=DAMAGED):  # (StoredBadDigest on moto)
        with fs.open("big", "wb") as f:
            f.write(os.urandom(11 * MIB))
    assert not fs.exists("big")


def test_a_part_damaged_once_is_sent_again(proxy: FaultProxy, bucket: str,
                                           digest: str) -> None:
    fs = filesystem(bucket, proxy.endpoint, write_digest=digest)
    data = os.urandom(11 * MIB)
    proxy.corrupt_next(1, match=is_part)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.corrupted == 1
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_a_part_damaged_after_the_probe_is_sent_again(proxy: FaultProxy, bucket: str,
                                                      server) -> None:
    fs = filesystem(bucket, proxy.endpoint)  # write_digest="auto": part 1 probes first
    data = os.urandom(11 * MIB)
    proxy.corrupt_next(1, match=lambda r: is_part(r) and not is_probe(r))
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.corrupted == 1 and proxy.methods["PUT"] == 5  # probe, 3 parts, 1 again
    assert integrity._signed == {proxy.endpoint: server.name == "ceph"}
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
    fs = filesystem("b", server.server.endpoint, write_digest="md5")  # (no probe)
    with fs.open("big", "wb") as f:
        f.write(os.urandom(11 * MIB))
    assert sum(h.startswith("PUT") for h in server.heads) == 3


# -- which digest goes where -----------------------------------------------------------------

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def sent_puts(fs: S3) -> list[dict[str, str]]:
    """The headers of every PUT ``fs``'s engine sends from now on, as signed."""
    puts: list[dict[str, str]] = []
    fs.connection.add_request_hook(
        lambda method, path, headers: puts.append(dict(headers)) if method == "PUT" else None)
    return puts


def proof(headers: dict[str, str]) -> str:
    """Which digest a PUT carried: ``"sha256"`` (signed), ``"md5"`` or ``"none"``."""
    if headers.get("x-amz-content-sha256", "UNSIGNED-PAYLOAD") != "UNSIGNED-PAYLOAD":
        return "sha256"
    return "md5" if "content-md5" in headers else "none"


def sha256s(data: bytes, part: int) -> set[str]:
    return {hashlib.sha256(data[i:i + part]).hexdigest() for i in range(0, len(data), part)}


def test_ceph_is_found_to_check_signed_hashes(ceph_server, monkeypatch) -> None:
    _use(monkeypatch, ceph_server)
    from tests.conftest import new_bucket

    fs = filesystem(new_bucket(ceph_server), ceph_server.endpoint)
    puts = sent_puts(fs)
    data = os.urandom(11 * MIB)
    for name in ("first", "second"):
        with fs.open(name, "wb") as f:
            f.write(data)
    probes = [h for h in puts if h["content-length"] == "1"]
    assert [h["x-amz-content-sha256"] for h in probes] == [EMPTY_SHA256]
    assert integrity._signed == {ceph_server.endpoint: True}
    assert [proof(h) for h in puts[4:]] == ["sha256"] * 3  # the second upload: no probe
    assert {h["x-amz-content-sha256"] for h in puts[4:]} == sha256s(data, 5 * MIB)
    assert all("content-md5" not in h for h in puts[4:])
    for name in ("first", "second"):
        with fs.open(name, "rb") as f:
            assert f.read() == data


def test_moto_is_found_not_to_check_signed_hashes(moto_server, monkeypatch) -> None:
    _use(monkeypatch, moto_server)
    from tests.conftest import new_bucket

    fs = filesystem(new_bucket(moto_server), moto_server.endpoint)
    puts = sent_puts(fs)
    data = os.urandom(11 * MIB)
    for name in ("first", "second"):
        with fs.open(name, "wb") as f:
            f.write(data)
    assert integrity._signed == {moto_server.endpoint: False}
    assert [h["content-length"] for h in puts].count("1") == 1  # probed once
    assert [proof(h) for h in puts[4:]] == ["md5"] * 3
    for name in ("first", "second"):  # the probe's byte was replaced by the real part 1
        assert fs.stat(name).size == len(data)
        with fs.open(name, "rb") as f:
            assert f.read() == data


def test_single_puts_send_their_md5_until_the_endpoint_is_known(ceph_server,
                                                                 monkeypatch) -> None:
    _use(monkeypatch, ceph_server)
    from tests.conftest import new_bucket

    fs = filesystem(new_bucket(ceph_server), ceph_server.endpoint)
    puts = sent_puts(fs)
    with fs.open("small", "wb") as f:
        f.write(b"before")
    with fs.open("big", "wb") as f:
        f.write(os.urandom(6 * MIB))
    with fs.open("small", "wb") as f:
        f.write(b"after")
    assert proof(puts[0]) == "md5"
    assert proof(puts[-1]) == "sha256" and \
        puts[-1]["x-amz-content-sha256"] == hashlib.sha256(b"after").hexdigest()
    with fs.open("small", "rb") as f:
        assert f.read() == b"after"


def test_an_exclusive_put_sends_its_md5(ceph_server, monkeypatch) -> None:
    _use(monkeypatch, ceph_server)
    from tests.conftest import new_bucket

    fs = filesystem(new_bucket(ceph_server), ceph_server.endpoint, write_digest="sha256")
    puts = sent_puts(fs)
    with fs.open("new", "xb") as f:  # (a lost answer is recognised by its MD5 ETag)
        f.write(b"only once")
    assert [proof(h) for h in puts] == ["md5"]


@pytest.mark.parametrize("digest", ["md5", "sha256"])
def test_a_forced_digest_is_sent_without_probing(server, bucket: str, digest: str) -> None:
    fs = filesystem(bucket, server.endpoint, write_digest=digest)
    puts = sent_puts(fs)
    data = os.urandom(11 * MIB)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert [proof(h) for h in puts] == [digest] * 3 and integrity._signed == {}
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_the_boto3_engine_sends_md5s(ceph_server, monkeypatch) -> None:
    _use(monkeypatch, ceph_server)
    from tests.conftest import new_bucket

    fs = S3(new_bucket(ceph_server), endpoint=ceph_server.endpoint, engine="boto3",
            mpu_chunksize=5 * MIB)
    data = os.urandom(6 * MIB)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert integrity._signed == {}  # (botocore signs bodies by its own rules: no probe)
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_a_probe_answered_by_a_throttle_leaves_the_endpoint_unknown(
        proxy: FaultProxy, bucket: str) -> None:
    fs = filesystem(bucket, proxy.endpoint)
    puts = sent_puts(fs)
    data = os.urandom(6 * MIB)
    proxy.fail_next(1, 503, "SlowDown", match=is_probe)
    with fs.open("big", "wb") as f:
        f.write(data)
    assert proxy.failed == 1 and integrity._signed == {}
    assert [proof(h) for h in puts if h["content-length"] != "1"] == ["md5", "md5"]
    with fs.open("big", "wb") as f:  # probed again
        f.write(data)
    assert [h["content-length"] for h in puts].count("1") == 2
    assert proxy.endpoint in integrity._signed
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_aws_is_known_to_check_signed_hashes() -> None:
    assert integrity.signed_payloads(None, "auto") is True
    assert integrity.signed_payloads("http://127.0.0.1:1", "auto") is None


def test_an_endpoint_that_echoes_checksums_is_not_probed(monkeypatch) -> None:
    monkeypatch.setattr(integrity, "_verifying", {"http://127.0.0.1:1"})
    assert integrity.signed_payloads("http://127.0.0.1:1", "auto") is False
    assert integrity.signed_payloads("http://127.0.0.1:1", "sha256") is False


def test_the_write_digest_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("PFIO_S3_WRITE_DIGEST", "md5")
    assert S3("b", endpoint="http://127.0.0.1:1").connection.settings.write_digest == "md5"
    assert S3("b", endpoint="http://127.0.0.1:1", write_digest="sha256"
              ).connection.settings.write_digest == "sha256"


def test_an_unknown_write_digest_is_a_valueerror(monkeypatch) -> None:
    with pytest.raises(ValueError, match="'crc64'"):
        S3("b", endpoint="http://127.0.0.1:1", write_digest="crc64")
    monkeypatch.setenv("PFIO_S3_WRITE_DIGEST", "sha1")
    with pytest.raises(ValueError, match="'sha1'"):
        S3("b", endpoint="http://127.0.0.1:1")
