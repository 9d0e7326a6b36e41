"""Contract: mkdir, makedirs, remove and rename."""

from __future__ import annotations

import errno

import pytest


def write(fs, path: str, data: bytes = b"data") -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


def read(fs, path: str) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read()


# -- mkdir / makedirs -----------------------------------------------------------------

def test_mkdir(backend):
    backend.require("has_directories", "mkdir is a no-op")
    backend.fs.mkdir("d")
    assert backend.fs.isdir("d")


def test_mkdir_existing(backend):
    backend.require("has_directories", "mkdir is a no-op")
    backend.fs.mkdir("d")
    with pytest.raises(FileExistsError):
        backend.fs.mkdir("d")


def test_mkdir_over_file(backend):
    backend.require("has_directories", "mkdir is a no-op")
    write(backend.fs, "f")
    with pytest.raises(FileExistsError):
        backend.fs.mkdir("f")


def test_mkdir_missing_parent(backend):
    backend.require("has_directories", "mkdir is a no-op")
    with pytest.raises(FileNotFoundError):
        backend.fs.mkdir("no/such/parent")


def test_makedirs(backend):
    backend.require("has_directories", "mkdir is a no-op")
    backend.fs.makedirs("x/y/z")
    assert backend.fs.isdir("x")
    assert backend.fs.isdir("x/y/z")


def test_makedirs_existing(backend):
    backend.require("has_directories", "mkdir is a no-op")
    backend.fs.makedirs("x/y")
    with pytest.raises(FileExistsError):
        backend.fs.makedirs("x/y")


def test_makedirs_exist_ok(fs):
    fs.makedirs("x/y")
    fs.makedirs("x/y", exist_ok=True)
    assert fs.isdir("x/y") or not fs.exists("x/y")


def test_makedirs_over_file(backend):
    backend.require("has_directories", "mkdir is a no-op")
    write(backend.fs, "f")
    with pytest.raises(FileExistsError):
        backend.fs.makedirs("f", exist_ok=True)


# -- remove -------------------------------------------------------------------------

def test_remove_file(fs):
    write(fs, "f")
    fs.remove("f")
    assert not fs.exists("f")


def test_remove_missing(fs):
    with pytest.raises(FileNotFoundError):
        fs.remove("missing")


def test_remove_empty_directory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.mkdir("d")
    backend.fs.remove("d")
    assert not backend.fs.exists("d")


def test_remove_non_empty_directory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.makedirs("d")
    write(backend.fs, "d/f")
    with pytest.raises(OSError) as info:
        backend.fs.remove("d")
    assert info.value.errno == errno.ENOTEMPTY
    assert read(backend.fs, "d/f") == b"data"


def test_remove_recursive(fs):
    fs.makedirs("d/e", exist_ok=True)
    write(fs, "d/e/f")
    write(fs, "d/g")
    fs.remove("d", recursive=True)
    assert not fs.exists("d")
    assert not fs.exists("d/e/f")


def test_remove_leaves_siblings(fs):
    write(fs, "keep")
    write(fs, "drop")
    fs.remove("drop")
    assert sorted(fs.list()) == ["keep"]


# -- rename -------------------------------------------------------------------------

def test_rename_file(fs):
    write(fs, "a", b"content")
    fs.rename("a", "b")
    assert not fs.exists("a")
    assert read(fs, "b") == b"content"


def test_rename_replaces_file(fs):
    write(fs, "a", b"new")
    write(fs, "b", b"old")
    fs.rename("a", "b")
    assert read(fs, "b") == b"new"
    assert not fs.exists("a")


def test_rename_missing(fs):
    with pytest.raises(FileNotFoundError):
        fs.rename("missing", "b")


def test_rename_to_itself(fs):
    write(fs, "a", b"same")
    fs.rename("a", "a")
    assert read(fs, "a") == b"same"


def test_rename_into_subdirectory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.mkdir("d")
    write(backend.fs, "a")
    backend.fs.rename("a", "d/a")
    assert sorted(backend.fs.list("d")) == ["a"]


def test_rename_into_missing_directory(backend):
    write(backend.fs, "a")
    if backend.rename_creates_parents or not backend.has_directories:
        backend.fs.rename("a", "new/a")
        assert read(backend.fs, "new/a") == b"data"
    else:
        with pytest.raises(FileNotFoundError):
            backend.fs.rename("a", "new/a")
        assert backend.fs.exists("a")


def test_rename_directory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.makedirs("d/sub")
    write(backend.fs, "d/sub/f", b"deep")
    backend.fs.rename("d", "e")
    assert not backend.fs.exists("d")
    assert read(backend.fs, "e/sub/f") == b"deep"


def test_rename_file_over_directory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.mkdir("d")
    write(backend.fs, "a")
    with pytest.raises(IsADirectoryError):
        backend.fs.rename("a", "d")


def test_rename_directory_over_file(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.mkdir("d")
    write(backend.fs, "a")
    with pytest.raises(NotADirectoryError):
        backend.fs.rename("d", "a")


def test_rename_directory_over_empty_directory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.makedirs("src")
    write(backend.fs, "src/f")
    backend.fs.mkdir("dst")
    backend.fs.rename("src", "dst")
    assert read(backend.fs, "dst/f") == b"data"


def test_rename_directory_over_non_empty_directory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.makedirs("src")
    backend.fs.makedirs("dst")
    write(backend.fs, "dst/f")
    with pytest.raises(OSError) as info:
        backend.fs.rename("src", "dst")
    assert info.value.errno in (errno.ENOTEMPTY, errno.EEXIST)
    assert backend.fs.isdir("src")


def test_rename_directory_into_itself(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.makedirs("d")
    with pytest.raises(OSError) as info:
        backend.fs.rename("d", "d/inside")
    assert info.value.errno == errno.EINVAL
    assert backend.fs.isdir("d")
