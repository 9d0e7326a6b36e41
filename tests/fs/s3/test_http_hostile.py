"""The ``http`` engine against hostile servers (scripted on loopback, :mod:`..hostile`):
every wait bounded on http and https, slow heads and bodies cut off, broken framing
refused (and its connection dropped), memory that follows the bytes received rather than
the sizes announced, resets that are never the end of a body, no header injection, IPv6
endpoints and the ``User-Agent``."""

from __future__ import annotations

import re
import secrets
import socket
import ssl
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pfio.fs.s3 import S3
from pfio.fs.s3.connection import S3Settings
from pfio.fs.s3.engine import Part
from pfio.fs.s3.errors import ProtocolError, TooSlow
from pfio.fs.s3.get import get_range
from pfio.fs.s3.wire import Endpoint
from pfio.version import __version__

from ..hostile import HostileServer, Peer, answer, elapsed, ok, serve

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                   "no_proxy", "ALL_PROXY", "all_proxy")
LISTING = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.'
           b'amazonaws.com/doc/2006-03-01/"><Name>b</Name><KeyCount>0</KeyCount>'
           b"<IsTruncated>false</IsTruncated></ListBucketResult>")


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch,
                loopback_tls: tuple[ssl.SSLContext, Path]) -> None:
    """Test credentials, no proxies, and the CA of the loopback certificates."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_CA_BUNDLE", str(loopback_tls[1]))
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def hostile() -> Iterator[Callable[..., HostileServer]]:
    """``hostile(script, tls=..., handshake=..., host=...)``: a :class:`HostileServer`,
    stopped after the test."""
    servers: list[HostileServer] = []

    def start(script: Callable[[Peer], None], **options: Any) -> HostileServer:
        servers.append(HostileServer(script, **options))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def tls(loopback_tls: tuple[ssl.SSLContext, Path]) -> ssl.SSLContext:
    return loopback_tls[0]


def filesystem(server: HostileServer, **options: Any) -> S3:
    """An S3 filesystem on ``server``: the http engine (made now: the clocks of the tests
    do not count its making), one attempt, short timeouts."""
    settings: dict[str, Any] = {"engine": "http", "max_attempts": 1, "read_timeout": 0.5,
                                "connect_timeout": 0.5}
    fs = S3("b", endpoint=server.endpoint, **{**settings, **options})
    fs.connection.engine()
    return fs


def read(server: HostileServer, key: str = "k", **options: Any) -> bytes:
    return read_from(filesystem(server, **options), key)


def read_from(fs: S3, key: str = "k") -> bytes:
    with fs.open(key, "rb") as f:
        return f.read()


def root_cause(exc: BaseException) -> BaseException:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def failure(call: Callable[[], object], within: float = 3.0) -> BaseException:
    """What ``call`` raises (an ``OSError``), traced to its root, within ``within`` s."""
    began = time.monotonic()
    with pytest.raises(OSError) as info:
        call()
    assert elapsed(began) < within
    return root_cause(info.value)


def in_turn(*answers: bytes, close_after: tuple[int, ...] = ()) -> Callable[[Peer], None]:
    """A script answering the requests of all connections with ``answers`` in turn
    (closing the connection after the answers whose index is in ``close_after``)."""
    queue = list(enumerate(answers))

    def script(peer: Peer) -> None:
        while queue and peer.request():
            index, raw = queue.pop(0)
            if not peer.send(raw) or index in close_after:
                break
        peer.close()

    return script


# -- 1. every wait bounded, on https too --------------------------------------------------

@pytest.mark.timeout(30)
def test_an_https_endpoint_silent_after_the_handshake_times_out(hostile, tls) -> None:
    server = hostile(lambda peer: peer.hold(), tls=tls)
    fs = filesystem(server)
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, TimeoutError) and "127.0.0.1" in str(cause)


@pytest.mark.timeout(30)
def test_an_https_endpoint_that_never_shakes_hands_times_out(hostile, tls) -> None:
    server = hostile(lambda peer: peer.hold(), tls=tls, handshake=False)
    fs = filesystem(server, read_timeout=10)
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, TimeoutError) and "TLS handshake" in str(cause)
    assert "127.0.0.1" in str(cause)


@pytest.mark.timeout(30)
def test_an_https_body_gone_silent_times_out(hostile, tls) -> None:
    def script(peer: Peer) -> None:
        peer.request()
        peer.send(answer("200 OK", "Content-Length: 1000", 'ETag: "e1"', body=b"x" * 10))
        peer.hold()

    fs = filesystem(hostile(script, tls=tls))
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, TimeoutError) and "127.0.0.1" in str(cause)


def test_plain_http_on_an_https_endpoint_fails_the_handshake(hostile) -> None:
    server = hostile(lambda peer: peer.send(answer("400 Bad Request", "Content-Length: 0")))
    https = S3("b", endpoint=f"https://127.0.0.1:{server.port}", engine="http",
               max_attempts=1)
    https.connection.engine()
    cause = failure(lambda: https.open("k", "rb"))
    assert "TLS handshake" in str(cause) and "127.0.0.1" in str(cause)


def test_https_answers_are_read_and_kept_alive(hostile, tls) -> None:
    server = hostile(serve(ok(b"one"), ok(b"two" * 100_000)), tls=tls)
    fs = filesystem(server)
    for expected in (b"one", b"two" * 100_000):
        with fs.open("k", "rb") as f:
            assert f.read() == expected
    assert server.connections == 1


# -- 2. slow heads and bodies -------------------------------------------------------------

@pytest.mark.timeout(30)
@pytest.mark.parametrize("secure", [False, True])
def test_a_head_trickled_a_byte_at_a_time_is_cut_off(hostile, tls, secure: bool) -> None:
    def script(peer: Peer) -> None:
        peer.request()
        peer.trickle(ok(b"x", "X-Padding: " + "p" * 100), every=0.05)

    server = hostile(script, tls=tls if secure else None)
    fs = filesystem(server)
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, TooSlow) and "whole head" in str(cause)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("secure", [False, True])
def test_a_body_trickled_a_byte_at_a_time_is_cut_off(hostile, tls, secure: bool) -> None:
    def script(peer: Peer) -> None:
        peer.request()
        peer.send(answer("200 OK", "Content-Length: 4000", 'ETag: "e1"'))
        peer.trickle(b"x" * 4000, every=0.02)

    server = hostile(script, tls=tls if secure else None)
    fs = filesystem(server, read_timeout=0.3, min_rate=1000)
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, TooSlow) and "slower than 1000 bytes/s" in str(cause)


@pytest.mark.timeout(30)
def test_retries_of_a_trickle_do_not_go_on_for_ever(hostile) -> None:
    """Each try brings a few bytes: too slowly to earn a fresh budget of tries."""
    tries = []

    def script(peer: Peer) -> None:
        asked = re.search(rb"range: bytes=(\d+)-", peer.request(), re.IGNORECASE)
        tries.append(asked)
        start = int(asked.group(1)) if asked else 0
        peer.send(answer("206 Partial Content", f"Content-Length: {4000 - start}",
                         f"Content-Range: bytes {start}-3999/4000", 'ETag: "e1"'))
        peer.trickle(b"x" * (4000 - start), every=0.02)

    fs = filesystem(hostile(script), read_timeout=0.3, min_rate=1000, max_attempts=3)
    assert isinstance(failure(lambda: read_from(fs), within=6), TooSlow)
    assert len(tries) == 3


def test_no_rate_floor_when_min_rate_is_0(hostile) -> None:
    def script(peer: Peer) -> None:
        peer.request()
        peer.send(answer("200 OK", "Content-Length: 40", 'ETag: "e1"'))
        peer.trickle(b"x" * 40, every=0.02)

    fs = filesystem(hostile(script), read_timeout=0.3, min_rate=0)
    assert read_from(fs) == b"x" * 40


@pytest.mark.timeout(30)
def test_a_server_taking_a_request_body_slowly_is_cut_off(hostile) -> None:
    def script(peer: Peer) -> None:  # takes 320 KiB/s, once the kernel's buffers are full
        while not peer.server.stopping.wait(0.2) and peer.sock.recv(64 << 10):
            pass

    engine = filesystem(hostile(script), min_rate=2_000_000).connection.engine()
    began = time.monotonic()
    with pytest.raises(TooSlow, match="slower than 2000000 bytes/s"):
        engine.put_object("b", "k", bytes(64 << 20), "AAAAAA==")
    assert elapsed(began) < 3


def test_a_slow_but_steady_body_is_read(hostile) -> None:
    body = bytes(range(256)) * 256  # 64 KiB in 16 pieces over about 0.3 s

    def script(peer: Peer) -> None:
        peer.request()
        peer.send(answer("200 OK", f"Content-Length: {len(body)}", 'ETag: "e1"'))
        peer.trickle(body, every=0.02, piece=4096)
        peer.close()

    assert read(hostile(script), read_timeout=0.3) == body


def test_a_reader_pausing_longer_than_the_window_is_not_too_slow(hostile) -> None:
    body = bytes(range(256)) * 2048  # 512 KiB: more than the opening read
    server = hostile(serve(ok(body)))
    fs = filesystem(server, read_timeout=0.2)
    with fs.open("k", "rb", first_fetch=256 << 10) as f:
        first = f.read(256 << 10)
        time.sleep(0.5)  # the body waits on its connection meanwhile
        assert first + f.read() == body
    assert len(server.requests) == 1  # read on from the opening GET's connection


def test_a_completion_kept_alive_with_whitespace_is_patient(hostile) -> None:
    result = b"<CompleteMultipartUploadResult><ETag>\"e-2\"</ETag></CompleteMultipartUploadResult>"

    def script(peer: Peer) -> None:
        peer.request()
        peer.send(answer("200 OK", f"Content-Length: {12 + len(result)}"))
        peer.trickle(b" " * 12, every=0.1)  # slower than any floor, for 1.2 s
        peer.send(result)
        peer.close()

    fs = filesystem(hostile(script), read_timeout=0.3)
    response = fs.connection.engine().complete_multipart_upload(
        "b", "k", "upload-1", [Part(number=1, etag='"e"')])
    assert response.etag == '"e-2"'


# -- 3. bad Content-Length ----------------------------------------------------------------

BAD_LENGTHS = [
    ("Content-Length: -1",),
    ("Content-Length: +5",),
    ("Content-Length:  5x",),
    ("Content-Length: 0x5",),
    ("Content-Length: ",),
    ("Content-Length: 5", "Content-Length: 6"),
    ("Content-Length: 5, 6",),
    ("Content-Length: 5", "Transfer-Encoding: chunked"),
    ("Content-Length: 1234567890123456789",),
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("status", ["200 OK", "206 Partial Content"])
@pytest.mark.parametrize("fields", BAD_LENGTHS)
def test_a_bad_content_length_is_a_protocol_error(hostile, status: str,
                                                  fields: tuple[str, ...]) -> None:
    raw = answer(status, *fields, 'ETag: "e1"', "Content-Range: bytes 0-4/5", body=b"hello")
    server = hostile(in_turn(raw))
    fs = filesystem(server)
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, ProtocolError) and isinstance(cause, ConnectionError)
    assert server.endpoint.removeprefix("http://") in str(cause)


def test_the_connection_of_a_protocol_error_is_not_kept(hostile) -> None:
    bad = answer("200 OK", "Content-Length: 5", "Content-Length: 6", body=b"hello")
    server = hostile(in_turn(bad, ok(b"fine")))
    assert read(server, max_attempts=2) == b"fine"  # retried on a new connection
    assert server.connections == 2


def test_repeats_of_one_content_length_are_one(hostile) -> None:
    raw = answer("200 OK", "Content-Length: 5", "Content-Length: 5", 'ETag: "e1"', body=b"hello")
    assert read(hostile(in_turn(raw))) == b"hello"


# -- 4. memory follows the bytes received -------------------------------------------------

def peak_memory(call: Callable[[], object]) -> int:
    """The most memory Python held while ``call`` ran (it must raise OSError)."""
    tracemalloc.start()
    try:
        with pytest.raises(OSError):
            call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def announce(raw: bytes) -> Callable[[Peer], None]:
    """A script that sends ``raw`` (a head announcing more than follows) and holds."""

    def script(peer: Peer) -> None:
        peer.request()
        peer.send(raw)
        peer.hold()

    return script


@pytest.mark.timeout(30)
@pytest.mark.parametrize("raw", [
    answer("200 OK", f"Content-Length: {60 << 20}", body=b"<ListBucketResult>"),
    answer("404 Not Found", f"Content-Length: {60 << 20}", body=b"<Error><Code>"),
    answer("200 OK", "Transfer-Encoding: chunked", body=b"3c00000\r\n<ListBucketResult>"),
], ids=["listing", "error", "chunk"])
def test_an_announced_size_is_not_allocated(hostile, raw: bytes) -> None:
    fs = filesystem(hostile(announce(raw)))
    assert peak_memory(lambda: list(fs.list("d"))) < 4 << 20


@pytest.mark.timeout(30)
def test_a_chunk_of_an_object_is_not_allocated_before_it_comes(hostile) -> None:
    raw = answer("200 OK", "Transfer-Encoding: chunked", 'ETag: "e1"', body=b"10000000\r\nab")
    fs = filesystem(hostile(announce(raw)))
    assert peak_memory(lambda: fs.open("k", "rb")) < 4 << 20


def test_a_listing_announced_over_the_cap_fails_at_once(hostile) -> None:
    raw = answer("200 OK", f"Content-Length: {256 << 20}", body=b"<ListBucketResult>")
    fs = filesystem(hostile(announce(raw)), read_timeout=5)
    cause = failure(lambda: list(fs.list("d")), within=2)
    assert isinstance(cause, ProtocolError) and "bytes allowed" in str(cause)


# -- 5. a reset is not the end of a body --------------------------------------------------

def cut(how: str) -> Callable[[Peer], None]:
    """A script that sends half a body without a length, then ends the connection
    ``how`` (a :class:`Peer` method: ``reset``, ``drop``, ``close``)."""

    def script(peer: Peer) -> None:
        peer.request()
        peer.send(answer("200 OK", 'ETag: "e1"', body=b"first half "))
        time.sleep(0.1)
        if how == "close":
            peer.send(b"second half")
        getattr(peer, how)()

    return script


@pytest.mark.timeout(30)
def test_a_reset_in_a_body_without_a_length_is_an_error(hostile) -> None:
    fs = filesystem(hostile(cut("reset")))
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, ConnectionError)


@pytest.mark.timeout(30)
def test_a_tls_eof_without_close_notify_is_an_error(hostile, tls) -> None:
    fs = filesystem(hostile(cut("drop"), tls=tls))
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, ConnectionError) and "127.0.0.1" in str(cause)


@pytest.mark.parametrize("secure", [False, True])
def test_a_clean_close_ends_a_body_without_a_length(hostile, tls, secure: bool) -> None:
    server = hostile(cut("close"), tls=tls if secure else None)
    assert read(server) == b"first half second half"


def test_a_range_without_a_length_is_delivered_as_it_came(hostile) -> None:
    body = bytes(range(100))
    raw = answer("206 Partial Content", 'ETag: "e1"', "Content-Range: bytes 10-19/100",
                 body=body[10:20])
    fs = filesystem(hostile(serve(raw)))
    assert bytes(get_range(fs.connection, "k", 10, 20).data) == body[10:20]


# -- 6. strict HTTP/1.1 framing -----------------------------------------------------------

MALFORMED = {
    "not http": b"FOO/9 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "two-digit status": b"HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nok",
    "http/2": b"HTTP/2 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "obs-fold": b"HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 2\r\n\r\nok",
    "space before colon": b"HTTP/1.1 200 OK\r\nETag : \"e\"\r\nContent-Length: 2\r\n\r\nok",
    "empty name": b"HTTP/1.1 200 OK\r\n: x\r\nContent-Length: 2\r\n\r\nok",
    "not a token": b"HTTP/1.1 200 OK\r\nE(T)ag: x\r\nContent-Length: 2\r\n\r\nok",
    "nul in a value": b"HTTP/1.1 200 OK\r\nETag: \"a\x00b\"\r\nContent-Length: 2\r\n\r\nok",
    "cr in a value": b"HTTP/1.1 200 OK\r\nETag: \"a\rb\"\r\nContent-Length: 2\r\n\r\nok",
    "lf in a value": b"HTTP/1.1 200 OK\r\nETag: \"a\nb\"\r\nContent-Length: 2\r\n\r\nok",
    "get 204": b"HTTP/1.1 204 No Content\r\nETag: \"e\"\r\n\r\n",
    "get 304": b"HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\n\r\n",
    "101": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
    "gzip, chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "chunked, gzip": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
    "chunked in http/1.0": b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
}
BAD_CHUNK_SIZES = ["3_e8", "0x3e8", "+3e8", " 3e8", "", "g", "0" * 16 + "2", "2 ;x"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("raw", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_answer_is_a_protocol_error(hostile, raw: bytes) -> None:
    fs = filesystem(hostile(serve(raw)))
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, ProtocolError), cause


@pytest.mark.timeout(30)
@pytest.mark.parametrize("size", BAD_CHUNK_SIZES)
def test_a_bad_chunk_size_is_a_protocol_error(hostile, size: str) -> None:
    raw = answer("200 OK", "Transfer-Encoding: chunked", 'ETag: "e1"',
                 body=size.encode() + b"\r\nok\r\n0\r\n\r\n")
    fs = filesystem(hostile(serve(raw)))
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, ProtocolError) and "chunk size" in str(cause)


@pytest.mark.timeout(30)
def test_chunk_data_must_end_with_crlf(hostile) -> None:
    raw = answer("200 OK", "Transfer-Encoding: chunked", 'ETag: "e1"',
                 body=b"2\r\nokXY0\r\n\r\n")
    fs = filesystem(hostile(serve(raw)))
    cause = failure(lambda: read_from(fs))
    assert isinstance(cause, ProtocolError)


def test_what_rfc_9112_allows_is_read(hostile) -> None:
    raws = [
        b"HTTP/1.1 200\r\nContent-Length: 2\r\nETag: \"e1\"\r\n\r\nok",  # no reason
        b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + ok(b"ok"),  # interim
        answer("200 OK", "Transfer-Encoding: Chunked", 'ETag: "e1"',
               body=b"1;name=value\r\no\r\n1;x\r\nk\r\n0\r\nX-Trailer: 1\r\n\r\n"),
        answer("200 OK", "X-Empty:", "X-Spaces: \t a  b \t", "Content-Length: 2",
               'ETag: "e1"', body=b"ok"),
    ]
    server = hostile(serve(*raws))
    fs = filesystem(server)
    for _ in raws:
        with fs.open("k", "rb") as f:
            assert f.read() == b"ok"
    assert server.connections == 1


@pytest.mark.parametrize(("connection", "kept"), [("close, x", False), ("x, CLOSE", False),
                                                  ("keep-alive, x", True)])
def test_connection_is_a_list_of_tokens(hostile, connection: str, kept: bool) -> None:
    first = ok(b"one", f"Connection: {connection}")
    server = hostile(in_turn(first, ok(b"two")))
    fs = filesystem(server)
    for expected in (b"one", b"two"):
        with fs.open("k", "rb") as f:
            assert f.read() == expected
    assert server.connections == (1 if kept else 2)


def test_a_delete_answered_204_and_a_head_are_valid(hostile) -> None:
    server = hostile(serve(answer("204 No Content"),
                           answer("200 OK", "Content-Length: 1000", 'ETag: "e1"')))
    engine = filesystem(server).connection.engine()
    assert engine.abort_multipart_upload("b", "k", "u").status == 204
    assert engine.head_object("b", "k").size == 1000


def test_a_head_without_a_length_is_an_error_not_an_empty_object(hostile) -> None:
    fs = filesystem(hostile(serve(answer("200 OK", 'ETag: "e1"', "Connection: close"))))
    assert isinstance(failure(lambda: fs.stat("k")), ProtocolError)


def test_bytes_left_after_an_answer_drop_its_connection(hostile) -> None:
    server = hostile(in_turn(ok(b"one") + b"HTTP/1.1 200 OK\r\n", ok(b"two")))
    fs = filesystem(server)
    for expected in (b"one", b"two"):
        with fs.open("k", "rb") as f:
            assert f.read() == expected
    assert server.connections == 2


def test_a_pathological_head_is_refused_in_linear_time(hostile) -> None:
    lines = "".join(f"X-{i}: {'a ' * 40}  \t \r\nX-Empty-{i}:   \t  \r\n" for i in range(90))
    raw = f"HTTP/1.1 200 OK\r\n{lines}X-Bad: a\x01\r\n\r\n".encode()
    fs = filesystem(hostile(serve(raw)))
    cause = failure(lambda: fs.open("k", "rb"), within=1)
    assert isinstance(cause, ProtocolError) and "X-Bad" in str(cause)


# -- 7. no header injection ---------------------------------------------------------------

@pytest.mark.parametrize("etag", ['"e1"\r\nX-Injected: 1', '"e1"\nX-Injected: 1', '"e1\x00"'])
def test_a_header_value_that_would_add_a_line_is_never_sent(hostile, etag: str) -> None:
    server = hostile(serve(ok(b"0123456789")))
    fs = filesystem(server)
    with pytest.raises(OSError) as info:
        get_range(fs.connection, "k", 0, 10, etag=etag)
    cause = root_cause(info.value)
    assert isinstance(cause, ValueError) and "if-match header" in str(cause)
    assert "Injected" not in str(cause) and "Signature" not in str(info.value)
    time.sleep(0.1)
    assert server.requests == []


def test_keys_are_percent_encoded_in_the_request_line(hostile) -> None:
    server = hostile(serve(ok(b"x")))
    assert read(server, key="a\r\nX-Injected: 1") == b"x"
    assert server.requests[0].split(b"\r\n")[0].startswith(
        b"GET /b/a%0D%0AX-Injected%3A%201 HTTP/1.1")


# -- 8. IPv6 ------------------------------------------------------------------------------

def ipv6_loopback() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize(("url", "host", "header"), [
    ("http://[::1]:9000", "::1", "[::1]:9000"),
    ("https://[2001:db8::7]", "2001:db8::7", "[2001:db8::7]"),
    ("http://127.0.0.1:9000", "127.0.0.1", "127.0.0.1:9000"),
])
def test_the_host_header_brackets_an_ipv6_address(url: str, host: str, header: str) -> None:
    at = Endpoint.of(S3Settings(endpoint=url), "us-east-1")
    assert (at.host, at.host_header) == (host, header)
    assert at.address("b", "k")[:2] == (host, header)


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 on the loopback interface")
def test_an_ipv6_endpoint(hostile) -> None:
    server = hostile(serve(ok(b"over v6")), host="::1")
    assert read(server) == b"over v6"
    assert f"host: [::1]:{server.port}\r\n".encode() in server.requests[0].lower() + b"\r\n"


# -- 9. User-Agent ------------------------------------------------------------------------

def test_every_request_names_pfio_and_python_unsigned(hostile) -> None:
    server = hostile(serve(ok(b"x"), ok(LISTING)))
    fs = filesystem(server)
    with fs.open("k", "rb") as f:
        f.read()
    list(fs.list())
    assert len(server.requests) == 2
    for head in server.requests:
        agent = re.search(rb"(?im)^user-agent: (.*)$", head)
        assert agent is not None
        assert re.fullmatch(rb"pfio/%s python/3\.\d+\.\d+\S*" % re.escape(__version__.encode()),
                            agent.group(1))
        signed = re.search(rb"SignedHeaders=([^,]*)", head)
        assert signed is not None and b"user-agent" not in signed.group(1)


def test_a_gateway_that_checks_signatures_accepts_them(ceph_server,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ceph_server.credentials.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_CA_BUNDLE")
    fs = S3(f"pfio-test-{secrets.token_hex(6)}", endpoint=ceph_server.endpoint, engine="http",
            mpu_chunksize=5 << 20, create_bucket=True)
    data = bytes(range(256)) * 24_000  # 6 MB: a multipart upload
    with fs.open("d/signed", "wb") as f:
        f.write(data)
    with fs.open("d/signed", "rb") as f:
        assert f.read() == data
    assert fs.stat("d/signed").size == len(data)
    assert list(fs.list("d")) == ["signed"]
    fs.remove("d/signed")
