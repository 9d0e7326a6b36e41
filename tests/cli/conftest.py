"""Fixtures of the ``pfio`` command's tests: a small local tree, a mem:// store, a zip."""

import zipfile

import pytest

from pfio.fs.memory import MemoryFS


@pytest.fixture
def tree(tmp_path):
    """src/a.txt, src/sub/b.bin (10240 bytes), src/sub/deeper/c.txt, src/empty/"""
    src = tmp_path / "src"
    (src / "sub" / "deeper").mkdir(parents=True)
    (src / "empty").mkdir()
    (src / "a.txt").write_bytes(b"alpha\n")
    (src / "sub" / "b.bin").write_bytes(bytes(range(256)) * 40)
    (src / "sub" / "deeper" / "c.txt").write_bytes(b"gamma")
    return src


@pytest.fixture
def mem(request):
    """A mem:// store of this test's own."""
    return MemoryFS("cli-" + request.node.name)


@pytest.fixture
def lines():
    """The 20 lines of the files the reading tests look at."""
    return [f"line {i}\n".encode() for i in range(1, 21)]


@pytest.fixture
def zip_path(tmp_path, lines):
    """data.zip: lines.txt (deflated), dir/raw.bin (stored, 200 bytes), dir/x.txt."""
    path = tmp_path / "data.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("lines.txt", b"".join(lines))
        z.writestr("dir/raw.bin", bytes(range(200)), compress_type=zipfile.ZIP_STORED)
        z.writestr("dir/x.txt", b"xyz")
    return path


@pytest.fixture(scope="session", params=["moto", "ceph"])
def s3_server(request):
    """The commands run on each S3 server in turn: moto, and Ceph's RADOS Gateway where one
    runs (it checks SigV4 signatures as AWS does)."""
    return request.getfixturevalue(f"{request.param}_server")
