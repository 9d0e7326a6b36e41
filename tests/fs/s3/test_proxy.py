"""pfio's own HTTP client through the proxies of the environment (``HTTP_PROXY``,
``HTTPS_PROXY``, ``NO_PROXY``): absolute-form requests to an http endpoint, a ``CONNECT``
tunnel to an https one, ``Proxy-Authorization`` from the proxy URL and never signed."""

from __future__ import annotations

import base64

import pytest

from pfio.fs.s3 import S3

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                   "no_proxy", "ALL_PROXY", "all_proxy")


@pytest.fixture
def s3_engine() -> str:
    return "http"


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def round_trip(fs: S3) -> None:
    data = bytes(range(256)) * 8000  # 2 MB: a plain GET read on, then ranged reads
    with fs.open("through", "wb") as f:
        f.write(data)
    with fs.open("through", "rb") as f:
        assert f.read() == data
    assert fs.exists("through") and "through" in list(fs.list())


# each test asks for a pool size of its own: a process makes its engine (which reads the
# proxy variables) once per set of settings


def test_an_http_endpoint_through_a_proxy_with_a_password(
        s3_env: str, s3_bucket: str, forward_proxy, no_proxies) -> None:
    no_proxies.setenv("HTTP_PROXY", f"http://user:p%40ss@127.0.0.1:{forward_proxy.port}")
    fs = S3(s3_bucket, max_pool_connections=11)
    round_trip(fs)
    assert fs.engine == "http"
    expected = "Basic " + base64.b64encode(b"user:p@ss").decode()
    assert forward_proxy.seen
    assert all(target.startswith(f"{s3_env}/{s3_bucket}") and auth == expected
               for _, target, auth in forward_proxy.seen)


def test_an_https_endpoint_through_a_tunnel(s3_env: str, s3_bucket: str, tls, forward_proxy,
                                            no_proxies) -> None:
    endpoint, ca = tls
    no_proxies.setenv("AWS_CA_BUNDLE", str(ca))
    no_proxies.setenv("HTTPS_PROXY", f"127.0.0.1:{forward_proxy.port}")
    round_trip(S3(s3_bucket, endpoint=endpoint.endpoint, max_pool_connections=12))
    authority = endpoint.endpoint.removeprefix("https://")
    assert forward_proxy.seen
    assert all(seen == ("CONNECT", authority, None) for seen in forward_proxy.seen)


def test_no_proxy_sends_requests_straight(s3_env: str, s3_bucket: str, forward_proxy,
                                          no_proxies) -> None:
    no_proxies.setenv("HTTP_PROXY", f"http://127.0.0.1:{forward_proxy.port}")
    no_proxies.setenv("NO_PROXY", "127.0.0.1,localhost")
    round_trip(S3(s3_bucket, max_pool_connections=13))
    assert forward_proxy.seen == []


def test_a_proxy_that_refuses_a_tunnel_is_named(s3_env: str, s3_bucket: str, no_proxies,
                                                tls) -> None:
    import socket
    import threading

    refusing = socket.create_server(("127.0.0.1", 0))

    def refuse() -> None:
        client, _ = refusing.accept()
        client.recv(65536)
        client.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0"
                       b"\r\n\r\n")
        client.close()

    threading.Thread(target=refuse, daemon=True).start()
    endpoint, ca = tls
    no_proxies.setenv("AWS_CA_BUNDLE", str(ca))
    no_proxies.setenv("HTTPS_PROXY", f"http://127.0.0.1:{refusing.getsockname()[1]}")
    fs = S3(s3_bucket, endpoint=endpoint.endpoint, max_pool_connections=14, max_attempts=1)
    with pytest.raises(OSError, match=f"s3://{s3_bucket}/k") as info:
        fs.open("k", "rb")
    assert "refused a tunnel" in str(info.value) and "407" in str(info.value)
    refusing.close()


def test_a_proxy_pfio_cannot_speak_to_says_what_to_do(s3_env: str, s3_bucket: str,
                                                      no_proxies) -> None:
    no_proxies.setenv("HTTP_PROXY", "socks5://127.0.0.1:1080")
    fs = S3(s3_bucket, max_pool_connections=15)
    with pytest.raises(ValueError, match="http:// proxies only.*engine='boto3'"):
        fs.open("k", "rb")
