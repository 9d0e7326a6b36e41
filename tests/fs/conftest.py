"""The S3 suite runs over every S3 server the session has: moto always, Ceph's RADOS Gateway
where ``scripts/ceph-rgw.sh start`` has started one (Ceph checks SigV4 signatures; moto
does not); and over each S3 engine (``http``, ``crt`` and ``boto3``)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", params=["moto", "ceph"])
def s3_server(request: pytest.FixtureRequest):
    """Each S3 server in turn (``moto_server``, ``ceph_server`` of ``tests/conftest.py``)."""
    return request.getfixturevalue(f"{request.param}_server")


@pytest.fixture(params=["http", "crt", "boto3"])
def s3_engine(request: pytest.FixtureRequest) -> str:
    """Each S3 engine in turn."""
    return request.param
