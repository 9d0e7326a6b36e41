"""S3 over https: a TLS-terminating proxy on loopback, in front of the test server, with a
certificate authority this test makes; the CA reaches the client through ``AWS_CA_BUNDLE``."""

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

from pfio.fs.s3 import S3

x509 = pytest.importorskip("cryptography.x509")


def _certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA certificate, and a certificate and key for 127.0.0.1 signed by it (PEM files)."""
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


class _TlsProxy:
    """Accepts TLS on 127.0.0.1 and relays the plain bytes to ``upstream``."""

    def __init__(self, upstream: tuple[str, int], cert: Path, key: Path) -> None:
        self.upstream = upstream
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.endpoint = f"https://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stopping = threading.Event()
        self.sockets: list[socket.socket] = []
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                raw, _ = self.listener.accept()
            except OSError:
                continue
            thread = threading.Thread(target=self._serve, args=(raw,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self, raw: socket.socket) -> None:
        raw.settimeout(10)
        try:
            client = self.context.wrap_socket(raw, server_side=True)
        except OSError:  # a client that rejected the certificate
            raw.close()
            return
        upstream = socket.create_connection(self.upstream)
        self.sockets += [client, upstream]
        pump = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        self.threads.append(pump)
        pump.start()
        _pump(client, upstream)

    def close(self) -> None:
        self.stopping.set()
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        for thread in self.threads:
            thread.join(timeout=10)
        self.listener.close()


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


def test_https_with_the_ca_bundle_of_aws_ca_bundle(s3_env: str, s3_bucket: str, tls,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    proxy, ca = tls
    monkeypatch.setenv("AWS_CA_BUNDLE", str(ca))
    fs = S3(s3_bucket, endpoint=proxy.endpoint, mpu_chunksize=5 << 20)
    data = bytes(range(256)) * 40_000  # 10 MB: two parts
    with fs.open("secure", "wb") as f:
        f.write(data)
    with fs.open("secure", "rb") as f:
        assert f.read() == data
    assert fs.list() is not None and "secure" in list(fs.list())


def test_an_unknown_certificate_is_refused_naming_the_url(s3_env: str, s3_bucket: str,
                                                          tls, monkeypatch) -> None:
    proxy, _ = tls
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)
    fs = S3(s3_bucket, endpoint=proxy.endpoint, max_attempts=2)
    with pytest.raises(OSError, match=f"s3://{s3_bucket}/k"):
        fs.open("k", "rb")
