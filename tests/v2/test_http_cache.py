"""The HTTP caches against a real HTTP server on loopback (``pfio.testing.make_http_server``):
``HTTPConnector``, ``HTTPCache`` (index cache) and ``HTTPCachedFS`` (filesystem)."""

from __future__ import annotations

import http.server
import logging
import pickle
import socket
import threading

import pytest

import pfio
import pfio.testing
from pfio.cache import HTTPCache, HTTPConnector
from pfio.testing import OnMemoryHTTPServerForTest, make_http_server


@pytest.fixture
def server():
    with make_http_server() as (_, port):
        yield f"http://127.0.0.1:{port}/cache/"


@pytest.fixture
def dead_url():
    """A loopback URL where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/cache/"


def test_connector_put_then_get(server):
    conn = HTTPConnector(server)
    assert conn.get("a") is None
    assert conn.put("a", b"bytes") is True
    assert conn.get("a") == b"bytes"
    assert OnMemoryHTTPServerForTest.files == {"/cache/a": b"bytes"}


def test_connector_takes_a_url_without_scheme(server):
    conn = HTTPConnector(server.removeprefix("http://"))
    assert conn.put("k", b"v") and conn.get("k") == b"v"


@pytest.mark.parametrize("url", ["https://example.com/x", "ftp://h/x", "http:///nohost"])
def test_connector_rejects_other_urls(url):
    with pytest.raises(ValueError, match="http://"):
        HTTPConnector(url)


def test_connector_sends_the_bearer_token_and_rereads_it(server, tmp_path):
    seen = []
    original = OnMemoryHTTPServerForTest.do_GET

    def spy(handler):
        seen.append(handler.headers.get("Authorization"))
        original(handler)

    token = tmp_path / "token"
    token.write_text("first\n")
    conn = HTTPConnector(server, bearer_token_path=str(token))
    OnMemoryHTTPServerForTest.do_GET = spy
    try:
        conn.get("x")
        token.write_text("second-token")
        conn.get("x")
    finally:
        OnMemoryHTTPServerForTest.do_GET = original
    assert seen == ["Bearer first", "Bearer second-token"]


def test_server_down_is_a_miss_and_a_refused_put(dead_url, caplog):
    conn = HTTPConnector(dead_url, timeout=1)
    with caplog.at_level(logging.WARNING, logger="pfio.cache.http_cache"):
        assert conn.get("a") is None
        assert conn.put("a", b"x") is False
    assert "HTTP cache GET" in caplog.text and "HTTP cache PUT" in caplog.text


def test_error_status_is_a_miss(caplog):
    class Failing(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_error(500)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Failing)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,))
    thread.start()
    try:
        conn = HTTPConnector(f"http://127.0.0.1:{httpd.server_address[1]}/")
        with caplog.at_level(logging.WARNING, logger="pfio.cache.http_cache"):
            assert conn.get("a") is None
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
    assert "status 500" in caplog.text


def test_http_cache_slots(server):
    cache = HTTPCache(3, server)
    assert (len(cache), cache.multiprocess_safe, cache.multithread_safe) == (3, True, True)
    assert cache.get(1) is None
    assert cache.put(1, b"one")
    assert cache.get(1) == b"one"
    assert cache.get_and_cache(2, lambda i: b"two") == b"two"
    assert OnMemoryHTTPServerForTest.files["/cache/2"] == b"two"


def test_http_cache_pickles(server):
    cache = HTTPCache(2, server, do_pickle=True)
    cache.put(0, {"a": [1, 2]})
    assert cache.get(0) == {"a": [1, 2]}
    assert pickle.loads(pickle.dumps(cache)).get(0) == {"a": [1, 2]}


@pytest.mark.parametrize("i", [-1, 3])
def test_http_cache_index_checks(server, i):
    cache = HTTPCache(3, server)
    with pytest.raises(IndexError):
        cache.get(i)
    with pytest.raises(IndexError):
        cache.put(i, b"x")


def test_http_cached_fs_reads_through_the_server(server, tmp_path):
    (tmp_path / "f.txt").write_text("hello")
    fs = pfio.v2.HTTPCachedFS(server, pfio.v2.Local(str(tmp_path)))
    with fs.open("f.txt", "rb") as f:
        assert f.read() == b"hello"
    [stored] = OnMemoryHTTPServerForTest.files.values()
    assert stored == b"hello"
    (tmp_path / "f.txt").unlink()  # the next read is served by the server
    with fs.open("f.txt", "r") as f:
        assert f.read() == "hello"


def test_http_cached_fs_delegates_the_rest(server, tmp_path):
    fs = pfio.v2.HTTPCachedFS(server, pfio.v2.Local(str(tmp_path)))
    with fs.open("w.bin", "wb") as f:
        f.write(b"data")
    assert fs.exists("w.bin") and fs.stat("w.bin").size == 4
    assert sorted(fs.list()) == ["w.bin"]
    assert OnMemoryHTTPServerForTest.files == {}


def test_http_cached_fs_skips_files_over_max_cache_size(server, tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 100)
    fs = pfio.v2.HTTPCachedFS(server, pfio.v2.Local(str(tmp_path)), max_cache_size=99)
    with fs.open("big", "rb") as f:
        assert f.read() == b"x" * 100
    assert OnMemoryHTTPServerForTest.files == {}


def test_http_cached_fs_does_not_wrap_itself(server, tmp_path):
    fs = pfio.v2.HTTPCachedFS(server, pfio.v2.Local(str(tmp_path)))
    with pytest.raises(ValueError, match="another HTTPCachedFS"):
        pfio.v2.HTTPCachedFS(server, fs)


def test_from_url_http_cache_option(server, tmp_path):
    (tmp_path / "a").write_bytes(b"A")
    fs = pfio.v2.from_url(str(tmp_path), http_cache=server)
    assert isinstance(fs, pfio.v2.HTTPCachedFS)
    with fs.open("a", "rb") as f:
        assert f.read() == b"A"
    assert list(OnMemoryHTTPServerForTest.files.values()) == [b"A"]


def test_make_http_server_stops_its_server():
    with make_http_server() as (httpd, port):
        assert httpd.server_address == ("127.0.0.1", port)
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


def test_entries_are_named_as_pfio2_named_them(tmp_path):
    from pfio.cache.http_cached_fs import canonical_name

    local = pfio.v2.Local(str(tmp_path))
    assert canonical_name(local, "d/../f.bin") == "file:/" + str(tmp_path / "f.bin")
    s3 = pfio.v2.S3("bkt", prefix="pre", endpoint="http://s3.example:9000")
    assert canonical_name(s3, "a/./k") == "s3://s3.example/bkt/pre/a/k"
    assert canonical_name(pfio.v2.S3("bkt", endpoint="s3.example"), "k") == \
        "s3://s3.example/bkt/k"
    with pfio.testing.ZipForTest(str(tmp_path / "t.zip")):
        with local.open_zip("t.zip") as archive:
            assert canonical_name(archive, "dir/f") == \
                f"file:/{tmp_path}/t.zip/pfio-zipfs/dir/f"


def test_an_entry_stored_under_the_pfio2_name_is_served(server, tmp_path):
    (tmp_path / "f").write_bytes(b"source")
    HTTPConnector(server).put("file:/" + str(tmp_path / "f"), b"from the server")
    fs = pfio.v2.HTTPCachedFS(server, pfio.v2.Local(str(tmp_path)))
    with fs.open("f", "rb") as f:
        assert f.read() == b"from the server"


def test_names_a_url_cannot_carry_are_escaped(server, tmp_path):
    (tmp_path / "a b%.txt").write_bytes(b"spaced")
    fs = pfio.v2.HTTPCachedFS(server, pfio.v2.Local(str(tmp_path)))
    for _ in range(2):
        with fs.open("a b%.txt", "rb") as f:
            assert f.read() == b"spaced"
    [name] = OnMemoryHTTPServerForTest.files
    assert name.endswith("/a%20b%25.txt")
