"""Fixtures of the client tests: third-party libraries' own calls, unchanged, on URLs of a
moto S3 server over real HTTP, with ``pfio.patch_all()`` on. No patch (nor the cache
switch) outlives a test, and spooled reads use a private object cache."""

import pytest

from pfio.patches import patch_all

from ..patches.conftest import _no_patches_left, object_cache  # noqa: F401 - fixtures


@pytest.fixture
def s3_unpatched(s3_env, s3_bucket):
    """``s3://<new bucket>/run``, no patch on."""
    return f"s3://{s3_bucket}/run"


@pytest.fixture
def s3_url(s3_unpatched):
    """``s3://<new bucket>/run`` with every patch on."""
    patch_all()
    return s3_unpatched
