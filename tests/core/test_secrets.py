"""No secret of a URL (``user:password@``) reaches a repr, an error or a log line, outside
the S3 backend (whose own tests cover it): URIs, HDFS, the HTTP caches, filesystems over
fsspec, archives on them, and the ``pfio`` command."""

from __future__ import annotations

import errno
import io
import logging
import socket
import zipfile

import pytest

import pfio
from pfio._uri import parse_uri, without_userinfo
from pfio.cli import main
from pfio.trace.redact import redact

PASSWORD = "hunter2pw"
ENDPOINT = f"http://user:{PASSWORD}@127.0.0.1:9000"


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("x", b"x")
    return buf.getvalue()


# -- URIs ----------------------------------------------------------------------------------

def test_uri_repr_leaves_out_userinfo():
    assert repr(parse_uri(ENDPOINT + "/b")) == \
        "URI(scheme='http', netloc='127.0.0.1:9000', path='/b')"


def test_uri_str_gives_the_url_back_whole():
    assert str(parse_uri(ENDPOINT + "/b")) == ENDPOINT + "/b"


@pytest.mark.parametrize("url", [f"file://user:{PASSWORD}@host/x",
                                 f"s3://user:{PASSWORD}@b/\x00"])
def test_a_malformed_url_error_shows_no_password(url):
    with pytest.raises(ValueError) as info:
        parse_uri(url)
    assert "malformed URL" in str(info.value) and PASSWORD not in str(info.value)


def test_without_userinfo_cuts_a_password_holding_an_at_sign():
    assert without_userinfo("see http://u:p@ss@host/x") == "see http://host/x"


def test_redact_cuts_a_password_holding_an_at_sign():
    assert redact(f"http://u:{PASSWORD}@ss@host/x") == "http://<redacted>@host/x"


# -- HDFS ----------------------------------------------------------------------------------

@pytest.fixture
def hdfs(request, monkeypatch):
    from pfio.testing.hdfs_standin import StandinFactory

    for name in ("HADOOP_CONF_DIR", "HADOOP_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HADOOP_USER_NAME", "tester")
    factory = StandinFactory(f"secrets-{request.node.name}")
    return pfio.from_url(f"hdfs://user:{PASSWORD}@nn:8020/d", client_factory=factory,
                         create=True)


def test_hdfs_drops_userinfo_from_its_name_service(hdfs):
    assert hdfs.nameservice == "nn:8020"


def test_hdfs_repr_shows_no_password(hdfs):
    assert PASSWORD not in repr(hdfs) and "nn:8020" in repr(hdfs)


def test_hdfs_errors_show_no_password(hdfs):
    with pytest.raises(FileNotFoundError) as info:
        hdfs.stat("missing")
    assert info.value.filename == "hdfs://nn:8020/d/missing"


def test_an_archive_on_hdfs_shows_no_password(hdfs):
    with hdfs.open("a.zip", "wb") as f:
        f.write(_zip_bytes())
    with hdfs.open_zip("a.zip") as archive:
        assert repr(archive) == "Zip('hdfs://nn:8020/d/a.zip', mode='r')"


# -- HTTP caches ---------------------------------------------------------------------------

@pytest.fixture
def dead_endpoint():
    """A loopback URL with credentials where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://user:{PASSWORD}@127.0.0.1:{port}/cache/"


def test_http_connector_repr_shows_no_password():
    from pfio.cache import HTTPConnector

    assert PASSWORD not in repr(HTTPConnector(ENDPOINT + "/cache/"))


def test_http_cache_repr_shows_no_password():
    from pfio.cache import HTTPCache

    assert PASSWORD not in repr(HTTPCache(4, ENDPOINT + "/cache/"))


def test_http_cached_fs_repr_shows_no_password():
    from pfio.cache.http_cached_fs import HTTPCachedFS

    fs = HTTPCachedFS(ENDPOINT + "/cache/", pfio.from_url("mem://secrets-http"))
    assert PASSWORD not in repr(fs) and "127.0.0.1:9000" in repr(fs)


def test_http_connector_error_shows_no_password():
    from pfio.cache import HTTPConnector

    with pytest.raises(ValueError, match="http:// URL") as info:
        HTTPConnector(f"https://user:{PASSWORD}@127.0.0.1/cache/")
    assert PASSWORD not in str(info.value)


def test_http_cache_warning_shows_no_password(dead_endpoint, caplog):
    from pfio.cache import HTTPConnector

    with caplog.at_level(logging.WARNING, logger="pfio.cache.http_cache"):
        assert HTTPConnector(dead_endpoint, timeout=1).get("k") is None
    assert "HTTP cache GET" in caplog.text and PASSWORD not in caplog.text


# -- filesystems over fsspec, and archives on them ----------------------------------------

@pytest.fixture
def fsspec_fs():
    pytest.importorskip("fsspec")
    from pfio.integrations.fsspec import FsspecFS

    fs = FsspecFS("memory", f"user:{PASSWORD}@host/secrets")
    with fs.open("a.zip", "wb") as f:
        f.write(_zip_bytes())
    return fs


def test_fsspec_describe_shows_no_password(fsspec_fs):
    assert fsspec_fs._describe("a.zip") == "memory://host/secrets/a.zip"


def test_fsspec_identity_shows_no_password_and_tells_users_apart(fsspec_fs):
    from pfio.integrations.fsspec import FsspecFS

    other = FsspecFS("memory", f"other:{PASSWORD}@host/secrets")
    assert PASSWORD not in fsspec_fs.identity("a.zip")
    assert fsspec_fs.identity("a.zip") != other.identity("a.zip")


def test_an_archive_over_fsspec_shows_no_password(fsspec_fs):
    with fsspec_fs.open_zip("a.zip") as archive:
        assert PASSWORD not in repr(archive)
        with pytest.raises(FileNotFoundError) as info:
            archive.open("missing", "rb")
    assert PASSWORD not in str(info.value)


# -- the pfio command ----------------------------------------------------------------------



@pytest.fixture
def leaky_scheme():
    """``leaky://`` filesystems fail every stat with an error naming a URL with a password
    (as a third-party backend or a library below one may)."""
    from pfio.fs.memory import MemoryFS

    class Leaky(MemoryFS):
        def stat(self, path: str) -> pfio.FileStat:
            raise OSError(errno.EIO, "I/O error", f"{ENDPOINT}/{path}")

    pfio.register_filesystem("leaky", lambda uri, **_: Leaky("secrets-leaky"))
    yield
    pfio.unregister_filesystem("leaky")


def test_cli_error_line_shows_no_password(leaky_scheme, capsys):
    assert main(["stat", "leaky://store/x"]) == 1
    err = capsys.readouterr().err
    assert "I/O error" in err and "127.0.0.1:9000/x" in err and PASSWORD not in err


def test_cli_usage_error_shows_no_password(tmp_path, capsys):
    assert main(["pack", "-q", str(tmp_path), f"{ENDPOINT}/out.rar"]) == 2
    err = capsys.readouterr().err
    assert "must end in .zip or .tar" in err and PASSWORD not in err
