"""Shared fixtures: a moto S3 server on 127.0.0.1 (real HTTP) and a fault-injecting proxy.

* ``moto_server`` (session): an :class:`S3Server` for a moto server
  (:class:`pfio.testing.s3server.MotoServer`) started for the test session;
* ``ceph_server`` (session): Ceph's RADOS Gateway when ``scripts/ceph-rgw.sh start`` has
  started one (``make test`` does, where Ceph installs), skipped with a message otherwise;
* ``s3_server`` (session): the server the S3 fixtures below use: moto. The S3 suite
  (``tests/fs/conftest.py``) overrides it to run over both servers;
* ``s3_endpoint``: its URL;
* ``s3_engine``: the S3 engine the tests use (``tests/fs`` runs over each one);
* ``s3_env``: test credentials, region, ``S3_ENDPOINT`` and the engine in the environment;
* ``s3_bucket``: a fresh bucket (its name) on the server, for one test;
* ``fault_proxy``: a :class:`pfio.testing.faultproxy.FaultProxy` in front of the server.

And for every test: no S3 endpoint is known yet to check checksums or signed payload
hashes (:mod:`pfio.fs.s3.integrity` learns that once per endpoint and process), so that the
requests a test sees do not depend on the tests that ran before it.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

TEST_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "pfio-test-key",
    "AWS_SECRET_ACCESS_KEY": "pfio-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}
CEPH_ENV_FILE = "/tmp/pfio-ceph/env"


@dataclass
class S3Server:
    """An S3 server the tests run against: its endpoint and the credentials it accepts."""

    name: str
    endpoint: str
    credentials: dict[str, str]


def _ceph_settings() -> dict[str, str]:
    """``PFIO_TEST_CEPH_*`` from the environment, else from the file that
    ``scripts/ceph-rgw.sh start`` writes."""
    settings = {k: v for k, v in os.environ.items() if k.startswith("PFIO_TEST_CEPH_")}
    if not settings and os.path.exists(CEPH_ENV_FILE):
        with open(CEPH_ENV_FILE) as f:
            settings = dict(line.strip().split("=", 1) for line in f if "=" in line)
    return settings


@pytest.fixture(autouse=True)
def _unknown_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint is known to check checksums or signed hashes (see the module doc)."""
    integrity = sys.modules.get("pfio.fs.s3.integrity")
    if integrity is not None:  # (else nothing was learnt yet)
        monkeypatch.setattr(integrity, "_verifying", set())
        monkeypatch.setattr(integrity, "_signed", {})


@pytest.fixture(scope="session")
def moto_server() -> Iterator[S3Server]:
    """A moto S3 server on 127.0.0.1 at a free port, for the whole session."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    from pfio.testing.s3server import MotoServer

    with MotoServer() as server:
        yield S3Server("moto", server.endpoint, dict(TEST_CREDENTIALS))


@pytest.fixture(scope="session")
def ceph_server() -> S3Server:
    """Ceph's RADOS Gateway started by ``scripts/ceph-rgw.sh start``, else a skip."""
    ceph = _ceph_settings()
    if "PFIO_TEST_CEPH_ENDPOINT" not in ceph:
        pytest.skip("no Ceph RADOS Gateway: run `scripts/ceph-rgw.sh start` (as root, "
                    "Debian/Ubuntu) to test against one")
    endpoint = urlsplit(ceph["PFIO_TEST_CEPH_ENDPOINT"])
    try:
        socket.create_connection((endpoint.hostname, endpoint.port), timeout=5).close()
    except OSError as e:
        pytest.fail(f"the Ceph RADOS Gateway at {endpoint.geturl()} does not answer ({e}): "
                    f"restart it with `scripts/ceph-rgw.sh start`, or remove {CEPH_ENV_FILE}")
    return S3Server("ceph", ceph["PFIO_TEST_CEPH_ENDPOINT"], {
        "AWS_ACCESS_KEY_ID": ceph["PFIO_TEST_CEPH_ACCESS_KEY"],
        "AWS_SECRET_ACCESS_KEY": ceph["PFIO_TEST_CEPH_SECRET_KEY"],
        "AWS_DEFAULT_REGION": "us-east-1",
    })


@pytest.fixture(scope="session")
def s3_server(moto_server: S3Server) -> S3Server:
    """The S3 server of the S3 fixtures: moto (``tests/fs`` adds Ceph)."""
    return moto_server


@pytest.fixture
def s3_endpoint(s3_server: S3Server) -> str:
    """The endpoint of the test's S3 server. Function-scoped on purpose: a session-scoped
    value would be cached with the server of the first test that asked for it, which in
    ``tests/fs`` may be Ceph, and served to tests elsewhere that want moto."""
    return s3_server.endpoint


@pytest.fixture
def s3_engine() -> str | None:
    """The S3 engine the S3 fixtures choose (``$PFIO_S3_ENGINE``): None, the default one
    (``tests/fs`` runs its tests on each engine)."""
    return None


def use_s3_server(monkeypatch: pytest.MonkeyPatch, server: S3Server,
                  engine: str | None = None) -> str:
    """Put ``server``'s credentials, a region, ``S3_ENDPOINT`` and ``engine``
    (``PFIO_S3_ENGINE``) in the environment for one test; returns the endpoint."""
    for name, value in server.credentials.items():
        monkeypatch.setenv(name, value)
    if engine:
        monkeypatch.setenv("PFIO_S3_ENGINE", engine)
    monkeypatch.setenv("S3_ENDPOINT", server.endpoint)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    return server.endpoint


#: the buckets the running test made on Ceph, removed when it ends: the gateway of
#: ``scripts/ceph-rgw.sh`` keeps objects in 8 GiB of memory, which one run of the suite
#: would fill (moto's store goes with its server at the end of the session)
_ceph_buckets: list[tuple[S3Server, str]] = []


def _client(server: S3Server) -> Any:
    import boto3

    creds = server.credentials
    return boto3.client(
        "s3", endpoint_url=server.endpoint, region_name=creds["AWS_DEFAULT_REGION"],
        aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])


def new_bucket(server: S3Server) -> str:
    """The name of a new, empty bucket on ``server`` (on Ceph, removed after the test)."""
    name = f"pfio-test-{secrets.token_hex(6)}"
    client = _client(server)
    client.create_bucket(Bucket=name)
    client.close()
    if server.name == "ceph":
        _ceph_buckets.append((server, name))
    return name


def _remove_bucket(server: S3Server, name: str) -> None:
    """Remove bucket ``name`` from ``server`` with its objects and unfinished uploads."""
    client = _client(server)
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=name):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                client.delete_objects(Bucket=name, Delete={"Objects": keys, "Quiet": True})
        for upload in client.list_multipart_uploads(Bucket=name).get("Uploads", []):
            client.abort_multipart_upload(Bucket=name, Key=upload["Key"],
                                          UploadId=upload["UploadId"])
        client.delete_bucket(Bucket=name)
    finally:
        client.close()


@pytest.fixture(autouse=True)
def _remove_ceph_buckets() -> Iterator[None]:
    """After each test, remove the buckets it made on Ceph (see :func:`new_bucket`)."""
    yield
    while _ceph_buckets:
        server, name = _ceph_buckets.pop()
        try:
            _remove_bucket(server, name)
        except Exception as exc:  # noqa: BLE001 - a leftover bucket must not fail the test
            warnings.warn(f"could not remove the test bucket {name} from Ceph: {exc}",
                          stacklevel=1)


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch, s3_server: S3Server, s3_engine: str | None) -> str:
    """The server's credentials, a region, ``S3_ENDPOINT`` and the engine
    (``PFIO_S3_ENGINE``) in the environment; returns the endpoint."""
    return use_s3_server(monkeypatch, s3_server, s3_engine)


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """The name of a new, empty bucket on the test server."""
    return new_bucket(s3_server)


@pytest.fixture
def fault_proxy(s3_endpoint: str) -> Iterator[Any]:
    """A fault proxy in front of the test server (``.endpoint`` is its URL)."""
    from pfio.testing.faultproxy import FaultProxy

    parts = urlsplit(s3_endpoint)
    with FaultProxy(parts.hostname, parts.port) as proxy:
        yield proxy


@pytest.fixture
def s3_requests() -> Any:
    """``attach(fs)``: start logging the requests ``fs`` sends in this process; returns the
    log, a list of ``(method, path, range header or None)`` (retries included)."""

    def attach(fs: Any) -> list[tuple[str, str, str | None]]:
        log: list[tuple[str, str, str | None]] = []

        fs.connection.add_request_hook(
            lambda method, path, headers: log.append((method, path, headers.get("range"))))
        return log

    return attach


@pytest.fixture
def ini(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``write(text)``: write the INI file of :mod:`pfio.config` (``PFIO_CONFIG_PATH``, empty
    at first; the cached config follows it) and return its path. Restored afterwards."""
    import textwrap

    from pfio import config

    path = tmp_path / "pfio.ini"
    monkeypatch.setenv("PFIO_CONFIG_PATH", str(path))

    def write(text: str) -> Any:
        path.write_text(textwrap.dedent(text))
        config.reload_config()
        return path

    write("")
    yield write
    monkeypatch.undo()
    config.reload_config()
