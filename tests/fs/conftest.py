"""The S3 suite runs over every S3 server the session has: moto always, Ceph's RADOS Gateway
where ``scripts/ceph-rgw.sh start`` has started one (Ceph checks SigV4 signatures; moto
does not); and over each S3 engine (``http`` and ``boto3``)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .hostile import LoopbackServer


@pytest.fixture(scope="session", params=["moto", "ceph"])
def s3_server(request: pytest.FixtureRequest):
    """Each S3 server in turn (``moto_server``, ``ceph_server`` of ``tests/conftest.py``)."""
    return request.getfixturevalue(f"{request.param}_server")


@pytest.fixture(params=["http", "boto3"])
def s3_engine(request: pytest.FixtureRequest) -> str:
    """Each S3 engine in turn."""
    return request.param


@pytest.fixture
def scripted_server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test credentials and region, no session token, profile or HTTP proxy: what the tests
    of a scripted S3 server (:mod:`.hostile`) need, whatever the machine's environment."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)


# -- https and proxies on loopback -----------------------------------------------------

def _certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA certificate, and a certificate and key for 127.0.0.1 signed by it (PEM files)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pfio test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                       False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


class _Relay(LoopbackServer):
    """A server on 127.0.0.1 whose ``_serve(client)`` runs in a thread per connection and may
    relay bytes to an upstream; ``close`` ends every connection and every thread."""

    def _relay(self, client: socket.socket, upstream: socket.socket) -> None:
        """Pass bytes both ways between ``client`` and ``upstream`` until both end."""
        self.sockets += [client, upstream]
        pump = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        self.threads.append(pump)
        pump.start()
        _pump(client, upstream)


class _TlsProxy(_Relay):
    """Accepts TLS on 127.0.0.1 and relays the plain bytes to ``upstream``."""

    def __init__(self, upstream: tuple[str, int], cert: Path, key: Path) -> None:
        self.upstream = upstream
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        super().__init__()
        self.endpoint = f"https://127.0.0.1:{self.port}"

    def _serve(self, raw: socket.socket) -> None:
        raw.settimeout(10)
        try:
            client = self.context.wrap_socket(raw, server_side=True)
        except OSError:  # a client that rejected the certificate
            raw.close()
            return
        self._relay(client, socket.create_connection(self.upstream))


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


@pytest.fixture
def tls(tmp_path: Path, s3_endpoint: str) -> Iterator[tuple[_TlsProxy, Path]]:
    ca, cert, key = _certificates(tmp_path)
    parts = urlsplit(s3_endpoint)
    proxy = _TlsProxy((parts.hostname, parts.port), cert, key)
    yield proxy, ca
    proxy.close()


class ForwardProxy(_Relay):
    """An HTTP proxy on 127.0.0.1: ``CONNECT`` tunnels and absolute-form requests (sent on
    to their server in origin form, without ``Proxy-Authorization``). ``seen`` holds the
    method, target and ``Proxy-Authorization`` of each request it was asked."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str | None]] = []
        super().__init__()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                client.close()
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ")
        fields = [line for line in lines[1:] if not line.lower().startswith("proxy-")]
        auth = next((line.split(":", 1)[1].strip() for line in lines[1:]
                     if line.lower().startswith("proxy-authorization:")), None)
        self.seen.append((method, target, auth))
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:  # one request per connection: the test servers close after each answer
            url = urlsplit(target)
            upstream = socket.create_connection((url.hostname, url.port))
            origin = url.path + (f"?{url.query}" if url.query else "")
            upstream.sendall("\r\n".join([f"{method} {origin} {version}", *fields, "", ""])
                             .encode("latin-1") + rest)
        self._relay(client, upstream)


@pytest.fixture
def forward_proxy() -> Iterator[ForwardProxy]:
    proxy = ForwardProxy()
    yield proxy
    proxy.close()


@pytest.fixture(scope="session")
def loopback_tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, Path]:
    """A TLS server context with a certificate for 127.0.0.1, and the path of the CA that
    signed it (for ``AWS_CA_BUNDLE``)."""
    ca, cert, key = _certificates(tmp_path_factory.mktemp("loopback-tls"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context, ca
