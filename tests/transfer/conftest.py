"""Copies and syncs run on each S3 server the session has: moto, and Ceph's RADOS Gateway
where one runs (it checks SigV4 signatures as AWS does)."""

import pytest


@pytest.fixture(scope="session", params=["moto", "ceph"])
def s3_server(request):
    """Each S3 server in turn (``moto_server``, ``ceph_server`` of ``tests/conftest.py``)."""
    return request.getfixturevalue(f"{request.param}_server")
