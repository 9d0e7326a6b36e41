"""fsspec's own conformance suite (``fsspec.tests.abstract``) run against ``PfioFileSystem``.

The same five abstract test classes that s3fs, gcsfs and fsspec's memory and local
filesystems run in their CI, on three pfio backends behind ``pfio://``: ``mem://``, a local
directory and S3 (the moto server over real HTTP).
"""

from __future__ import annotations

import secrets

import pytest

pytest.importorskip("fsspec")

import fsspec.tests.abstract as abstract  # noqa: E402

import pfio  # noqa: E402
from pfio.integrations.fsspec import PfioFileSystem  # noqa: E402


class _Suite(
    abstract.AbstractFixtures,
    abstract.AbstractCopyTests,
    abstract.AbstractGetTests,
    abstract.AbstractPutTests,
    abstract.AbstractOpenTests,
    abstract.AbstractPipeTests,
):
    """The five abstract classes; a subclass supplies ``fs`` and ``fs_path``."""


class TestMemory(_Suite):
    @pytest.fixture
    def fs(self):
        return PfioFileSystem(skip_instance_cache=True)

    @pytest.fixture
    def fs_path(self):
        return f"mem/conformance-{secrets.token_hex(6)}"


class TestLocal(_Suite):
    @pytest.fixture
    def fs(self):
        return PfioFileSystem(auto_mkdir=True, skip_instance_cache=True)

    @pytest.fixture
    def fs_path(self, tmp_path_factory):
        return "file" + str(tmp_path_factory.mktemp("conformance"))


@pytest.fixture(scope="module")
def conformance_bucket(s3_server):
    """One bucket for the S3 class (each test works under a prefix of its own)."""
    creds = s3_server.credentials
    name = f"pfio-conformance-{secrets.token_hex(6)}"
    pfio.from_url(f"s3://{name}", endpoint=s3_server.endpoint,
                  aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
                  aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"],
                  region=creds["AWS_DEFAULT_REGION"], create_bucket=True).close()
    return name


class TestS3(_Suite):
    """S3 keeps no directories, but the directories made through the bridge are empty ones
    for the rest of the process (see ``pfio.fs.made_directories``)."""

    @pytest.fixture
    def fs(self, s3_env):
        return PfioFileSystem(skip_instance_cache=True)

    @pytest.fixture
    def fs_path(self, conformance_bucket):
        return f"s3/{conformance_bucket}/{secrets.token_hex(6)}"
