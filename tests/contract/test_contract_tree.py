"""Contract: listing, stat, isdir/exists and glob."""

from __future__ import annotations

import stat as _stat
import time

import pytest

from pfio.fs.stat import FileStat


def make_tree(fs) -> None:
    """a.txt, b/c.txt, b/d/e.bin (directories made by makedirs where there are any)."""
    fs.makedirs("b/d", exist_ok=True)
    for path, data in (("a.txt", b"A"), ("b/c.txt", b"CC"), ("b/d/e.bin", b"EEE")):
        with fs.open(path, "wb") as f:
            f.write(data)


# -- list ---------------------------------------------------------------------------

def test_list_marks_directories_with_slash(fs):
    make_tree(fs)
    assert sorted(fs.list()) == ["a.txt", "b/"]


def test_list_subdirectory(fs):
    make_tree(fs)
    assert sorted(fs.list("b")) == ["c.txt", "d/"]


def test_list_subdirectory_with_trailing_slash(fs):
    make_tree(fs)
    assert sorted(fs.list("b/")) == ["c.txt", "d/"]


def _recursive(fs, names):
    """``names`` as a recursive listing of ``fs`` gives them: without the directories on a
    filesystem that lists its keys only (S3, as PFIO 2.x did)."""
    return names if fs.list_implied_directories else \
        [name for name in names if name.rstrip("/") not in ("b", "b/d")]


def test_list_recursive(fs):
    make_tree(fs)
    assert sorted(fs.list(recursive=True)) == \
        _recursive(fs, ["a.txt", "b/", "b/c.txt", "b/d/", "b/d/e.bin"])


def test_list_detail(fs):
    make_tree(fs)
    entries = {s.filename: s for s in fs.list(detail=True)}
    assert set(entries) == {"a.txt", "b"}
    assert all(isinstance(s, FileStat) for s in entries.values())
    assert entries["a.txt"].size == 1 and not entries["a.txt"].isdir()
    assert entries["b"].isdir()


def test_list_recursive_detail(fs):
    make_tree(fs)
    names = sorted(s.filename for s in fs.list(recursive=True, detail=True))
    assert names == _recursive(fs, ["a.txt", "b", "b/c.txt", "b/d", "b/d/e.bin"])


def test_list_empty_directory(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.mkdir("empty")
    assert list(backend.fs.list("empty")) == []


def test_list_missing_directory(fs):
    with pytest.raises(FileNotFoundError):
        list(fs.list("missing"))


def test_list_file(backend):
    backend.require("has_directories", "listing a key lists the prefix")
    make_tree(backend.fs)
    with pytest.raises(NotADirectoryError):
        list(backend.fs.list("a.txt"))


# -- stat ---------------------------------------------------------------------------

def test_stat_file(fs):
    before = time.time()
    make_tree(fs)
    st = fs.stat("b/c.txt")
    assert st.size == 2
    assert not st.isdir()
    assert _stat.S_ISREG(st.mode)
    assert st.last_modified is not None
    assert before - 5 < st.last_modified < time.time() + 5
    assert st.filename.endswith("c.txt")


def test_stat_directory(backend):
    backend.require("has_directories", "no real directories")
    make_tree(backend.fs)
    st = backend.fs.stat("b")
    assert st.isdir()
    assert _stat.S_ISDIR(st.mode)


def test_stat_missing(fs):
    with pytest.raises(FileNotFoundError):
        fs.stat("missing")


# -- isdir / exists -------------------------------------------------------------------

def test_exists(fs):
    make_tree(fs)
    assert fs.exists("a.txt")
    assert fs.exists("b")
    assert fs.exists("b/d/e.bin")
    assert not fs.exists("missing")
    assert not fs.exists("a.txt/below")


def test_isdir(fs):
    make_tree(fs)
    assert fs.isdir("b")
    assert fs.isdir("b/d")
    assert not fs.isdir("a.txt")
    assert not fs.isdir("missing")


def test_root_is_a_directory(backend):
    if backend.has_directories:
        assert backend.fs.isdir("")
    make_tree(backend.fs)
    assert backend.fs.isdir("")


# -- glob ---------------------------------------------------------------------------

def test_glob_star(fs):
    make_tree(fs)
    assert fs.glob("*.txt") == ["a.txt"]


def test_glob_in_subdirectory(fs):
    make_tree(fs)
    assert fs.glob("b/*") == ["b/c.txt", "b/d"]


def test_glob_double_star(fs):
    make_tree(fs)
    assert fs.glob("**/*.bin") == ["b/d/e.bin"]


def test_glob_question_mark_and_class(fs):
    make_tree(fs)
    assert fs.glob("[ab]?txt") == ["a.txt"]


def test_glob_no_match(fs):
    make_tree(fs)
    assert fs.glob("*.none") == []
