"""``FS.copy`` on every backend (server-side on S3) and ``pfio.copy`` between filesystems."""

from __future__ import annotations

import io
import os
import zipfile
from typing import Any

import pytest

import pfio
from pfio.fs.local import Local

from ..conftest import new_bucket


def _read(fs: pfio.FS, name: str) -> bytes:
    with fs.open(name, "rb") as f:
        return f.read()


def _write(fs: pfio.FS, name: str, data: bytes) -> None:
    with fs.open(name, "wb") as f:
        f.write(data)


@pytest.fixture(params=["local", "mem", "s3"])
def any_fs(request: pytest.FixtureRequest, tmp_path: Any, s3_server: Any) -> pfio.FS:
    """A filesystem of each kind (S3 on each server: ``s3_server`` is asked for here because
    a parametrized fixture cannot be asked for only when needed)."""
    if request.param == "local":
        return Local(str(tmp_path))
    if request.param == "mem":
        return request.getfixturevalue("mem")
    return request.getfixturevalue("s3")


def _gets(log: list[tuple[str, str, str | None]]) -> list[str]:
    """The objects read by the requests in ``log`` (listings, ``GET /bucket/``, aside)."""
    return [path for method, path, _ in log if method == "GET" and not path.endswith("/")]


# -- FS.copy ------------------------------------------------------------------------------

def test_fs_copy_copies_the_bytes(any_fs):
    _write(any_fs, "src.bin", b"payload" * 1000)
    any_fs.copy("src.bin", "dst.bin")
    assert _read(any_fs, "dst.bin") == b"payload" * 1000
    assert _read(any_fs, "src.bin") == b"payload" * 1000


def test_fs_copy_replaces_an_existing_file(any_fs):
    _write(any_fs, "src.bin", b"new")
    _write(any_fs, "dst.bin", b"old contents")
    any_fs.copy("src.bin", "dst.bin")
    assert _read(any_fs, "dst.bin") == b"new"


def test_fs_copy_of_a_missing_file_raises_file_not_found(any_fs):
    with pytest.raises(FileNotFoundError):
        any_fs.copy("missing.bin", "dst.bin")
    assert not any_fs.exists("dst.bin")


def test_fs_copy_of_a_directory_raises_is_a_directory(any_fs):
    any_fs.makedirs("d", exist_ok=True)
    _write(any_fs, "d/inside.bin", b"x")
    with pytest.raises(IsADirectoryError):
        any_fs.copy("d", "dst.bin")
    assert not any_fs.exists("dst.bin")


def test_fs_copy_onto_itself_changes_nothing(any_fs):
    _write(any_fs, "same.bin", b"kept")
    any_fs.copy("same.bin", "same.bin")
    assert _read(any_fs, "same.bin") == b"kept"


@pytest.mark.parametrize("kind", ["local", "mem"])
def test_fs_copy_onto_a_directory_raises_is_a_directory(kind, tmp_path, mem):
    fs = Local(str(tmp_path)) if kind == "local" else mem
    _write(fs, "src.bin", b"x")
    fs.makedirs("d")
    with pytest.raises(IsADirectoryError):
        fs.copy("src.bin", "d")


def test_fs_copy_into_a_missing_local_directory_raises_file_not_found(tmp_path):
    fs = Local(str(tmp_path))
    _write(fs, "src.bin", b"x")
    with pytest.raises(FileNotFoundError):
        fs.copy("src.bin", "no/such/dst.bin")


def test_s3_copy_is_server_side(s3, s3_requests):
    _write(s3, "big/src.bin", os.urandom(300_000))
    log = s3_requests(s3)
    s3.copy("big/src.bin", "copied/dst.bin")
    assert _gets(log) == []
    assert [method for method, _, _ in log] == ["HEAD", "PUT"]
    assert _read(s3, "copied/dst.bin") == _read(s3, "big/src.bin")


def test_s3_copy_between_buckets_of_one_endpoint_is_server_side(s3, s3_server, s3_requests):
    other = new_bucket(s3_server)
    _write(s3, "src.bin", b"across buckets")
    log = s3_requests(s3)
    result = pfio.copy(f"s3://{s3.bucket}/src.bin", f"s3://{other}/dst.bin")
    assert _gets(log) == []
    assert result.copied == ["src.bin"] and result.bytes == len(b"across buckets")
    with pfio.from_url(f"s3://{other}/") as fs:
        assert _read(fs, "dst.bin") == b"across buckets"


def test_s3_copy_above_the_copy_limit_goes_in_parts(s3, s3_requests):
    data = os.urandom(6 << 20)
    _write(s3, "src.bin", data)
    s3.copy_limit, s3.copy_part_size = 1 << 20, 5 << 20  # 2 parts: 5 MiB and 1 MiB
    log = s3_requests(s3)
    s3.copy("src.bin", "dst.bin")
    assert _gets(log) == []
    assert sum(1 for method, _, _ in log if method == "PUT") == 2  # UploadPartCopy x 2
    assert _read(s3, "dst.bin") == data


def test_s3_copy_of_a_missing_key_names_the_source(s3):
    with pytest.raises(FileNotFoundError, match="missing.bin"):
        s3.copy("missing.bin", "dst.bin")


def test_s3_copy_to_a_directory_name_raises_is_a_directory(s3):
    _write(s3, "src.bin", b"x")
    with pytest.raises(IsADirectoryError):
        s3.copy("src.bin", "d/")


# -- pfio.copy ----------------------------------------------------------------------------

def test_copy_a_local_file_to_s3(tmp_path, s3):
    (tmp_path / "model.pt").write_bytes(b"weights")
    result = pfio.copy(str(tmp_path / "model.pt"), f"s3://{s3.bucket}/models/model.pt")
    assert _read(s3, "models/model.pt") == b"weights"
    assert (result.copied, result.bytes, result.errors) == (["model.pt"], 7, [])


def test_copy_a_file_into_an_existing_directory(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a")
    (tmp_path / "dir").mkdir()
    result = pfio.copy(str(tmp_path / "a.txt"), str(tmp_path / "dir"))
    assert (tmp_path / "dir" / "a.txt").read_bytes() == b"a"
    assert result.destination == str(tmp_path / "dir" / "a.txt")


def test_copy_a_file_to_a_name_ending_with_a_slash_goes_into_it(tmp_path, s3):
    (tmp_path / "a.txt").write_bytes(b"a")
    pfio.copy(str(tmp_path / "a.txt"), f"s3://{s3.bucket}/new/")
    assert _read(s3, "new/a.txt") == b"a"


def test_copy_an_s3_directory_to_mem(s3, mem):
    for name in ("top.txt", "d/one.txt", "d/e/two.txt"):
        _write(s3, f"tree/{name}", name.encode())
    result = pfio.copy(f"s3://{s3.bucket}/tree", f"mem://{mem.name}/copy", recursive=True)
    assert sorted(result.copied) == ["d/e/two.txt", "d/one.txt", "top.txt"]
    for name in result.copied:
        assert _read(mem, f"copy/{name}") == name.encode()


def test_copy_of_a_directory_never_nests(tmp_path, mem):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "f.txt").write_bytes(b"f")
    for _ in range(2):
        pfio.copy(str(tmp_path / "src"), f"mem://{mem.name}/dst", recursive=True)
    assert sorted(mem.list("dst", recursive=True)) == ["f.txt"]


def test_copy_a_zip_member_to_local(tmp_path):
    with zipfile.ZipFile(tmp_path / "data.zip", "w") as z:
        z.writestr("img/0001.jpg", b"jpeg bytes")
    pfio.copy(str(tmp_path / "data.zip" / "img" / "0001.jpg"), str(tmp_path / "out.jpg"))
    assert (tmp_path / "out.jpg").read_bytes() == b"jpeg bytes"


def test_copy_of_a_zip_file_copies_the_archive(tmp_path, mem):
    with zipfile.ZipFile(tmp_path / "data.zip", "w") as z:
        z.writestr("a.txt", b"a")
    pfio.copy(str(tmp_path / "data.zip"), f"mem://{mem.name}/data.zip")
    with zipfile.ZipFile(io.BytesIO(_read(mem, "data.zip"))) as z:
        assert z.read("a.txt") == b"a"


def test_copy_of_a_directory_needs_recursive(tmp_path):
    (tmp_path / "src").mkdir()
    with pytest.raises(IsADirectoryError, match="recursive=True"):
        pfio.copy(str(tmp_path / "src"), str(tmp_path / "dst"))
    assert not (tmp_path / "dst").exists()


def test_copy_of_a_missing_source_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        pfio.copy(str(tmp_path / "missing"), str(tmp_path / "dst"))


def test_copy_without_overwrite_refuses_before_copying_anything(tmp_path, mem):
    (tmp_path / "src").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "src" / name).write_bytes(b"new")
    _write(mem, "dst/b.txt", b"old")
    with pytest.raises(FileExistsError, match="b.txt"):
        pfio.copy(str(tmp_path / "src"), f"mem://{mem.name}/dst", recursive=True,
                  overwrite=False)
    assert sorted(mem.list("dst")) == ["b.txt"] and _read(mem, "dst/b.txt") == b"old"


def test_copy_of_a_file_without_overwrite_refuses_an_existing_one(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"new")
    (tmp_path / "b.txt").write_bytes(b"old")
    with pytest.raises(FileExistsError):
        pfio.copy(str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), overwrite=False)
    assert (tmp_path / "b.txt").read_bytes() == b"old"


def test_copy_to_an_archive_is_refused(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_bytes(b"a")
    with zipfile.ZipFile(tmp_path / "out.zip", "w") as z:
        z.writestr("old.txt", b"o")
    with pytest.raises(io.UnsupportedOperation, match="read-only"):
        pfio.copy(str(tmp_path / "src"), str(tmp_path / "out.zip" / "d"), recursive=True)
