"""Copies and syncs run on each S3 server the session has: moto, and Ceph's RADOS Gateway
where one runs (it checks SigV4 signatures as AWS does)."""

import secrets
from collections.abc import Iterator

import pytest

import pfio
from pfio.fs.memory import MemoryFS


@pytest.fixture(scope="session", params=["moto", "ceph"])
def s3_server(request):
    """Each S3 server in turn (``moto_server``, ``ceph_server`` of ``tests/conftest.py``)."""
    return request.getfixturevalue(f"{request.param}_server")


@pytest.fixture
def mem() -> Iterator[MemoryFS]:
    """A fresh ``mem://`` store."""
    with MemoryFS(f"transfer-{secrets.token_hex(4)}") as fs:
        yield fs


@pytest.fixture
def s3(s3_env: str, s3_bucket: str) -> Iterator[pfio.FS]:
    """The root of a new bucket on the test's S3 server."""
    with pfio.from_url(f"s3://{s3_bucket}/") as fs:
        yield fs
