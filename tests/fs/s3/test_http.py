"""The ``http`` engine's own parts: SigV4 signatures equal botocore's, and HTTP answers that
real servers give now and then (chunked, unframed, interim, closed while idle, too long,
not HTTP), served by a scripted server on loopback."""

from __future__ import annotations

import datetime
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials as BotoCredentials

from pfio.fs.s3 import S3
from pfio.fs.s3.sigv4 import Credentials, Signer

WHEN = datetime.datetime(2026, 11, 24, 5, 6, 7, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize(("method", "path", "query", "headers"), [
    ("GET", "/bucket/train/0001.jpg", "", [("range", "bytes=0-99")]),
    ("GET", "/bucket/a%20b/%E3%81%82%2Bc%3D", "", [("if-match", '"abc"')]),
    ("PUT", "/bucket/k", "partNumber=3&uploadId=a%2Fb%3D%3D",
     [("x-amz-checksum-crc32", "AAAAAA==")]),
    ("POST", "/bucket/k", "uploads", [("x-amz-checksum-algorithm", "CRC32")]),
    ("DELETE", "/bucket/k", "uploadId=xyz", []),
])
@pytest.mark.parametrize("token", [None, "session-token"])
def test_the_signature_is_botocore_s(monkeypatch: pytest.MonkeyPatch, method: str, path: str,
                                     query: str, headers: list[tuple[str, str]],
                                     token: str | None) -> None:
    host = "127.0.0.1:9000"
    ours = dict(Signer(lambda: Credentials("AKIDEXAMPLE", "secret/key", token), "eu-west-1")
                .sign(method, path, query, [("host", host), *headers],
                      now=WHEN.timestamp()))

    monkeypatch.setattr("botocore.auth.get_current_datetime",
                        lambda: WHEN.replace(tzinfo=None))
    url = f"http://{host}{path}" + (f"?{query}" if query else "")
    request = AWSRequest(method=method, url=url, headers=dict(headers))
    request.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    S3SigV4Auth(BotoCredentials("AKIDEXAMPLE", "secret/key", token), "s3",
                "eu-west-1").add_auth(request)
    assert ours["authorization"] == request.headers["Authorization"]
    assert ours["x-amz-date"] == request.headers["X-Amz-Date"]
    assert ours.get("x-amz-security-token") == request.headers.get("X-Amz-Security-Token")


# -- a scripted server --------------------------------------------------------------------

@dataclass
class Answer:
    """What the server sends to one request, and whether it then closes the connection."""

    raw: bytes
    close: bool = False


@dataclass
class ScriptedServer:
    """Answers each request it reads with the next :class:`Answer`; counts connections."""

    answers: list[Answer]
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while self.answers:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, data = data.partition(b"\r\n\r\n")
                self.requests.append(head)
                answer = self.answers.pop(0)
                try:
                    conn.sendall(answer.raw)
                except OSError:  # the client went away before taking it all
                    return
                if answer.close:
                    return

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    scripted = ScriptedServer([])
    yield scripted
    scripted.close()


def ok(body: bytes, *extra: str) -> bytes:
    fields = "".join(f"{line}\r\n" for line in extra)
    return (f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nETag: \"e1\"\r\n{fields}\r\n"
            .encode() + body)


def read(server: ScriptedServer, key: str = "k", **options: object) -> bytes:
    fs = S3("b", endpoint=server.endpoint, engine="http", **options)
    with fs.open(key, "rb") as f:
        return f.read()


def test_a_body_in_chunks_is_read(server: ScriptedServer) -> None:
    server.answers.append(Answer(
        b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"10\r\n<Error><Code>NoS\r\n15;ext=1\r\nuchKey</Code></Error>\r\n"
        b"0\r\nX-Trailer: 1\r\n\r\n"))
    server.answers.append(Answer(ok(  # then botocore asks whether "k/" is a folder: no
        b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>'
        b"<KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>")))
    with pytest.raises(FileNotFoundError, match="s3://b/k"):
        read(server)


def test_a_body_without_a_length_ends_with_the_connection(server: ScriptedServer) -> None:
    server.answers.append(Answer(b"HTTP/1.1 200 OK\r\nETag: \"e\"\r\n\r\nall of it", close=True))
    assert read(server) == b"all of it"


def test_an_http_1_0_answer_is_not_kept(server: ScriptedServer) -> None:
    server.answers += [Answer(ok(b"one").replace(b"HTTP/1.1", b"HTTP/1.0")), Answer(ok(b"two"))]
    fs = S3("b", endpoint=server.endpoint, engine="http")
    for expected in (b"one", b"two"):
        with fs.open("k", "rb") as f:
            assert f.read() == expected
    assert server.connections == 2


def test_interim_answers_are_skipped(server: ScriptedServer) -> None:
    server.answers.append(Answer(b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"data")))
    assert read(server) == b"data"


def test_connections_are_kept_alive(server: ScriptedServer) -> None:
    server.answers += [Answer(ok(b"x" * 1000)) for _ in range(5)]
    fs = S3("b", endpoint=server.endpoint, engine="http")
    for _ in range(5):
        with fs.open("k", "rb") as f:
            assert f.read() == b"x" * 1000
    assert server.connections == 1


def test_the_connection_of_a_stream_read_to_its_end_serves_again(server: ScriptedServer) -> None:
    body = bytes(range(256)) * 2048  # 512 KiB: longer than the opening read
    server.answers += [Answer(ok(body)), Answer(ok(b"again"))]
    fs = S3("b", endpoint=server.endpoint, engine="http")
    with fs.open("k", "rb", first_fetch=256 << 10) as f:
        assert f.read() == body  # 256 KiB, then the rest from the same answer
    with fs.open("k", "rb") as f:
        assert f.read() == b"again"
    assert server.connections == 1 and len(server.requests) == 2


def test_a_connection_the_server_closed_while_idle_is_replaced(server: ScriptedServer) -> None:
    server.answers += [Answer(ok(b"first"), close=True), Answer(ok(b"second"))]
    fs = S3("b", endpoint=server.endpoint, engine="http", max_attempts=1)
    with fs.open("k", "rb") as f:
        assert f.read() == b"first"
    with fs.open("k", "rb") as f:  # sent on the closed connection, then on a new one
        assert f.read() == b"second"
    assert server.connections == 2 and len(server.requests) == 2


def test_an_answer_that_is_not_http_is_an_error(server: ScriptedServer) -> None:
    server.answers.append(Answer(b"SSH-2.0-OpenSSH_9.6\r\n\r\n", close=True))
    with pytest.raises(OSError, match="other than HTTP"):
        read(server, max_attempts=1)


def test_a_head_too_long_is_an_error(server: ScriptedServer) -> None:
    server.answers.append(Answer(b"HTTP/1.1 200 OK\r\nX-Padding: " + b"p" * (1 << 20), close=True))
    with pytest.raises(OSError, match="head of over"):
        read(server, max_attempts=1)


def test_an_answer_cut_short_is_retried_from_where_it_stopped(server: ScriptedServer) -> None:
    body = bytes(range(256)) * 40
    server.answers += [
        Answer(ok(body)[:-4000], close=True),
        Answer(b"HTTP/1.1 206 Partial Content\r\nContent-Length: 4000\r\nETag: \"e1\"\r\n"
               b"Content-Range: bytes %d-%d/%d\r\n\r\n" % (len(body) - 4000, len(body) - 1,
                                                          len(body)) + body[-4000:])]
    assert read(server) == body
    assert b"range: bytes=%d-" % (len(body) - 4000) in server.requests[1].lower()


def test_requests_are_signed_with_the_session_token(server: ScriptedServer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "the-token")
    server.answers.append(Answer(ok(b"x")))
    read(server)
    head = server.requests[0].decode().lower()
    assert "x-amz-security-token: the-token" in head
    assert "signedheaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token" in head


def test_a_head_answer_has_no_body_whatever_its_length(server: ScriptedServer) -> None:
    server.answers += [
        Answer(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"e1\"\r\n"
               b"Last-Modified: Tue, 24 Nov 2026 05:06:07 GMT\r\n"
               b"x-amz-meta-origin: camera 3\r\n\r\n"),
        Answer(ok(b"after"))]
    fs = S3("b", endpoint=server.endpoint, engine="http")
    stat = fs.stat("k")
    assert (stat.size, stat.etag, stat.metadata) == (1000, "e1", {"origin": "camera 3"})
    assert stat.last_modified == WHEN.replace(second=7).timestamp()
    with fs.open("k", "rb") as f:  # the next answer on the same connection
        assert f.read() == b"after"
    assert server.connections == 1


def test_past_max_parked_open_files_read_on_with_ranges(server: ScriptedServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pfio.fs.s3.http_pool.MAX_PARKED", 1)
    body = bytes(range(256)) * 2048  # 512 KiB: longer than the opening reads
    server.answers += [Answer(ok(body), close=True) for _ in range(3)]
    fs = S3("b", endpoint=server.endpoint, engine="http")
    with fs.open("k", "rb", first_fetch=256 << 10) as first, \
            fs.open("k", "rb", first_fetch=256 << 10) as second:
        assert first.reader._stream is not None  # kept for reading on
        assert second.reader._stream is None  # one too many: its connection was dropped
    with fs.open("k", "rb", first_fetch=256 << 10) as third:
        assert third.reader._stream is not None  # the first one's end made room again


def listing(*contents: str, prefixes: tuple[str, ...] = (), token: str = "") -> bytes:
    """A ListObjectsV2 answer with URL-encoded keys, as S3 sends for ``encoding-type=url``."""
    items = "".join(f"<Contents><Key>{key}</Key><LastModified>2026-11-24T05:06:07.000Z"
                    f"</LastModified><ETag>&quot;e&quot;</ETag><Size>3</Size></Contents>"
                    for key in contents)
    common = "".join(f"<CommonPrefixes><Prefix>{p}</Prefix></CommonPrefixes>"
                     for p in prefixes)
    more = f"<IsTruncated>true</IsTruncated><NextContinuationToken>{token}" \
           "</NextContinuationToken>" if token else "<IsTruncated>false</IsTruncated>"
    return ok(('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.'
               'amazonaws.com/doc/2006-03-01/"><Name>b</Name><EncodingType>url</EncodingType>'
               f"<KeyCount>{len(contents)}</KeyCount>{more}{items}{common}"
               "</ListBucketResult>").encode())


def test_a_listing_is_read_by_the_engine_in_pages(server: ScriptedServer) -> None:
    server.answers += [Answer(listing("d/a+b.txt", "d/%E3%81%82", prefixes=("d/sub/",),
                                      token="t/1=")),
                       Answer(listing("d/z"))]
    fs = S3("b", endpoint=server.endpoint, engine="http")
    entries = {s.filename: s for s in fs.list("d", detail=True)}
    assert sorted(entries) == ["a b.txt", "sub", "z", "あ"]
    assert entries["z"].size == 3 and entries["z"].last_modified == WHEN.replace(
        second=7).timestamp()
    first, second = (head.decode() for head in server.requests)
    assert first.startswith("GET /b?list-type=2&encoding-type=url&prefix=d%2F&delimiter=%2F ")
    assert "&continuation-token=t%2F1%3D " in second.partition("\r\n")[0]


def test_a_stream_gone_silent_gives_way_to_a_ranged_get(server: ScriptedServer) -> None:
    body = bytes(range(256)) * 4096  # 1 MiB
    half = 256 << 10
    server.answers += [  # the opening GET's body stops past the opening read, then nothing
        Answer(ok(body)[:-(len(body) - 2 * half)]),
        Answer(b"HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\n"
               b"Content-Length: %d\r\nContent-Range: bytes %d-%d/%d\r\n\r\n"
               % (len(body) - 2 * half, 2 * half, len(body) - 1, len(body)) + body[2 * half:])]
    fs = S3("b", endpoint=server.endpoint, engine="http", read_timeout=0.3)
    with fs.open("k", "rb", first_fetch=half) as f:
        assert f.read() == body
    assert b"range: bytes=%d-" % (2 * half) in server.requests[1].lower()


def test_a_bucket_in_another_region_is_asked_there(server: ScriptedServer) -> None:
    error = b"<Error><Code>PermanentRedirect</Code></Error>"
    moved = (b"HTTP/1.1 301 Moved Permanently\r\nx-amz-bucket-region: eu-west-1\r\n"
             b"Content-Length: %d\r\n\r\n%s" % (len(error), error))
    server.answers += [Answer(moved), Answer(ok(b"there")), Answer(ok(b"again"))]
    fs = S3("b", endpoint=server.endpoint, engine="http")
    for expected in (b"there", b"again"):
        with fs.open("k", "rb") as f:
            assert f.read() == expected
    scopes = [head.decode().split("Credential=key/")[1].split(",")[0][9:]
              for head in server.requests]
    assert scopes == ["us-east-1/s3/aws4_request", "eu-west-1/s3/aws4_request",
                      "eu-west-1/s3/aws4_request"]


@pytest.mark.parametrize(("bucket", "host", "path"), [
    ("plain", "plain.s3.eu-west-1.amazonaws.com", "/k"),
    ("with.dots", "s3.eu-west-1.amazonaws.com", "/with.dots/k"),  # no certificate for it
])
def test_virtual_hosts_on_aws(bucket: str, host: str, path: str) -> None:
    from pfio.fs.s3.connection import S3Settings
    from pfio.fs.s3.wire import Endpoint

    at = Endpoint.of(S3Settings(addressing_style="virtual"), "eu-west-1")
    assert at.url == "https://s3.eu-west-1.amazonaws.com" and at.port == 443
    assert at.address(bucket, "k")[0::2] == (host, path)
