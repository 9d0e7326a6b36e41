"""``open(path)`` without a mode reads text, as builtin ``open`` and PFIO 2.x do (issue #16)."""

from __future__ import annotations

import io
import secrets
import zipfile

import pytest

import pfio
import pfio.v2
from pfio import trace
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.fs.s3 import S3

DATA = b"caf\xc3\xa9\r\nline two\n"
TEXT = "café\nline two\n"  # utf-8, universal newlines


def _zip_bytes() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("d/m.txt", DATA)
    return out.getvalue()


def _put(fs, path: str, data: bytes) -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


@pytest.fixture(params=["local", "mem", "s3"])
def fs(request, tmp_path):
    """Each backend that PFIO 2.x opened as text by default, rooted at an empty directory."""
    if request.param == "local":
        yield Local(str(tmp_path))
    elif request.param == "mem":
        yield MemoryFS(f"default-mode-{secrets.token_hex(6)}", "top", create=True)
    else:
        request.getfixturevalue("s3_env")
        yield S3(request.getfixturevalue("s3_bucket"))


def test_files_and_zip_members_read_text_by_default(fs):
    _put(fs, "f.txt", DATA)
    _put(fs, "a.zip", _zip_bytes())
    with fs.open("f.txt") as f:
        assert f.read() == TEXT
    with fs.open_zip("a.zip") as archive, archive.open("d/m.txt") as member:
        assert member.read() == TEXT
    with fs.open("f.txt", "rb") as f:  # bytes when asked for
        assert f.read() == DATA


def test_pfio2_spellings_read_text_by_default(tmp_path):
    (tmp_path / "f.txt").write_bytes(DATA)
    (tmp_path / "a.zip").write_bytes(_zip_bytes())
    with pfio.v2.from_url(str(tmp_path)) as fs, fs.open("f.txt") as f:
        assert f.read() == TEXT
    with pfio.v2.from_url(str(tmp_path / "a.zip")) as archive, archive.open("d/m.txt") as f:
        assert f.read() == TEXT
    with pfio.v2.open_url(str(tmp_path / "f.txt")) as f:
        assert f.read() == TEXT
    with pfio.v2.Path("f.txt", fs=pfio.v2.Local(str(tmp_path))).open() as f:
        assert f.read() == TEXT


def test_a_traced_local_file_reads_text_by_default(tmp_path):
    (tmp_path / "f.txt").write_bytes(DATA)
    with trace.tracing(), Local(str(tmp_path)).open("f.txt") as f:
        assert f.read() == TEXT
