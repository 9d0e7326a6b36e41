"""The backend contract suite: one set of tests run against every filesystem backend.

The ``backend`` fixture is parametrized over the backends; each test is written once and
asks the fixture's capability flags where backends legitimately differ (S3 has no real
directories, object stores create parents on write, ...), skipping with a reason or
adjusting its expectation.

Backends: ``local`` (a temporary directory), ``mem`` (a fresh ``mem://`` store),
``hdfs-standin`` (:class:`pfio.fs.hdfs.Hdfs` over the in-memory stand-in for the
hdfs-native client), ``hdfs-pyarrow-local`` (``Hdfs(client="pyarrow")``'s adapter over
pyarrow's local filesystem), ``s3`` (a fresh prefix of a bucket on a moto server on
127.0.0.1), ``s3-ceph`` (the same on Ceph's RADOS Gateway, when one runs), and
``hdfs`` (a real cluster) when ``PFIO_TEST_HDFS_URL`` is set, e.g.
``PFIO_TEST_HDFS_URL=hdfs://nameservice/tmp``: every test works in a fresh directory below
it, removed afterwards.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from pfio.fs.base import FS


@dataclass
class Backend:
    """A filesystem under test and what it can do.

    Attributes:
        name: the parameter id.
        fs: the filesystem, rooted at an empty directory of its own.
        has_directories: ``mkdir`` creates a directory that exists while empty.
        supports_append: ``"a"`` modes work.
        write_creates_parents: writing ``a/b`` creates a missing ``a`` (object stores, HDFS);
            otherwise it raises ``FileNotFoundError`` (POSIX).
        rename_creates_parents: the same for the destination of ``rename``.
        shared_across_processes: a spawned process sees the same files.
        deny: ``deny(path)`` makes ``path`` unreadable to this user, or None where the
            backend (or a root user) cannot.
    """

    name: str
    fs: FS
    has_directories: bool = True
    supports_append: bool = True
    write_creates_parents: bool = True
    rename_creates_parents: bool = False
    shared_across_processes: bool = False
    deny: Callable[[str], None] | None = None

    def require(self, flag: str, reason: str) -> None:
        """Skip the test unless capability ``flag`` is set."""
        if not getattr(self, flag):
            pytest.skip(f"{self.name}: {reason}")


def _local(request, tmp_path) -> Iterator[Backend]:
    from pfio.fs.local import Local

    fs = Local(tmp_path)

    def deny(path: str) -> None:
        os.chmod(os.path.join(tmp_path, path), 0)

    root = hasattr(os, "geteuid") and os.geteuid() == 0
    yield Backend("local", fs, write_creates_parents=False, shared_across_processes=True,
                  deny=None if root else deny)


def _mem(request, tmp_path) -> Iterator[Backend]:
    from pfio.fs.memory import MemoryFS

    yield Backend("mem", MemoryFS(f"contract-{secrets.token_hex(6)}", "top", create=True),
                  rename_creates_parents=True)


def _hdfs_standin(request, tmp_path) -> Iterator[Backend]:
    from pfio.fs.hdfs import Hdfs
    from pfio.testing.hdfs_standin import StandinFactory

    factory = StandinFactory(f"contract-{secrets.token_hex(6)}")
    fs = Hdfs("/contract", nameservice="standin", client_factory=factory, create=True)

    def deny(path: str) -> None:
        fs.client.set_permission(fs._path(path), 0)

    yield Backend("hdfs-standin", fs, deny=deny)


def _hdfs_pyarrow_local(request, tmp_path) -> Iterator[Backend]:
    pytest.importorskip("pyarrow.fs")
    from pfio.fs.hdfs import Hdfs

    fs = Hdfs(str(tmp_path), nameservice="localhost:8020",
              client_factory=_PyarrowLocalFactory(), create=True)
    yield Backend("hdfs-pyarrow-local", fs, shared_across_processes=True)


class _PyarrowLocalFactory:
    """Picklable factory: the pyarrow adapter over ``pyarrow.fs.LocalFileSystem``."""

    def __call__(self, target: object) -> object:
        from pyarrow.fs import LocalFileSystem

        from pfio.fs.hdfs.pyarrow_client import PyarrowClient

        return PyarrowClient(LocalFileSystem())


def _hdfs_real(request, tmp_path) -> Iterator[Backend]:
    url = os.environ.get("PFIO_TEST_HDFS_URL")
    if not url:
        pytest.skip("set PFIO_TEST_HDFS_URL=hdfs://NAMESERVICE/dir to test a real cluster")
    import pfio

    base = pfio.from_url(url)
    name = f"pfio-contract-{secrets.token_hex(6)}"
    base.makedirs(name, exist_ok=True)
    yield Backend("hdfs", base.subfs(name), shared_across_processes=True)
    base.remove(name, recursive=True)


_s3_buckets: dict[str, str] = {}


def _s3_on(server_fixture: str) -> Callable[..., Iterator[Backend]]:
    """A backend on the S3 server of ``server_fixture`` (tests/conftest.py)."""

    def setup(request, tmp_path) -> Iterator[Backend]:
        server = request.getfixturevalue(server_fixture)
        from pfio.fs.s3 import S3

        # explicit credentials: a forkserver started earlier would not see the environment's
        creds = server.credentials
        options = {"endpoint": server.endpoint, "aws_access_key_id": creds["AWS_ACCESS_KEY_ID"],
                   "aws_secret_access_key": creds["AWS_SECRET_ACCESS_KEY"],
                   "region": creds["AWS_DEFAULT_REGION"]}
        bucket = _s3_buckets.get(server.endpoint)
        if bucket is None:  # one bucket per server; each test gets a fresh prefix in it
            bucket = _s3_buckets[server.endpoint] = f"contract-{secrets.token_hex(6)}"
            S3(bucket, create_bucket=True, **options).close()
        fs = S3(bucket, secrets.token_hex(6), **options)
        yield Backend(f"s3-{server.name}", fs, has_directories=False, supports_append=False,
                      rename_creates_parents=True, shared_across_processes=True)
        fs.close()

    return setup


BACKENDS: dict[str, Callable[..., Iterator[Backend]]] = {
    "local": _local,
    "mem": _mem,
    "hdfs-standin": _hdfs_standin,
    "hdfs-pyarrow-local": _hdfs_pyarrow_local,
    "hdfs": _hdfs_real,
    "s3": _s3_on("moto_server"),
    "s3-ceph": _s3_on("ceph_server"),
}


@pytest.fixture(params=list(BACKENDS))
def backend(request, tmp_path) -> Iterator[Backend]:
    """Each backend in turn, rooted at an empty directory."""
    setup = BACKENDS[request.param](request, tmp_path)
    yield next(setup)
    next(setup, None)  # the backend's clean-up


@pytest.fixture
def fs(backend: Backend) -> FS:
    """The filesystem of :func:`backend`."""
    return backend.fs
