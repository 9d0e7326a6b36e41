import os
from pathlib import PurePosixPath

import pytest

from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.v2 import Path


@pytest.fixture(params=["local", "mem"])
def fs(request, tmp_path):
    if request.param == "local":
        return Local(str(tmp_path))
    return MemoryFS("v2path-" + request.node.name)


@pytest.fixture
def tree(fs):
    """a.txt, d/b.bin, d/e/c.txt, empty/"""
    fs.makedirs("d/e")
    for name, data in [("a.txt", b"A"), ("d/b.bin", b"BB"), ("d/e/c.txt", b"CCC")]:
        with fs.open(name, "wb") as f:
            f.write(data)
    fs.mkdir("empty")
    return Path(fs=fs)


# -- pure paths ---------------------------------------------------------------------------

@pytest.mark.parametrize("segments", [("a", "b.tar.gz"), ("/x/y",), ("d/",), ("a/../b",)])
def test_pure_properties_match_pathlib(segments):
    p, q = Path(*segments, fs=MemoryFS("pure")), PurePosixPath(*segments)
    assert str(p) == str(q)
    assert (p.name, p.stem, p.suffix, p.suffixes) == (q.name, q.stem, q.suffix, q.suffixes)
    assert p.parts == q.parts
    assert str(p.parent) == str(q.parent)
    assert [str(x) for x in p.parents] == [str(x) for x in q.parents]
    assert p.is_absolute() == q.is_absolute()
    assert p.as_posix() == q.as_posix()
    assert p.root == q.root and p.anchor == q.anchor


def test_join_keeps_the_filesystem():
    fs = MemoryFS("pure")
    p = Path("a", fs=fs) / "b" / Path("c")
    assert str(p) == "a/b/c" and p.fs is fs
    assert str("top" / Path("x", fs=fs)) == "top/x"
    assert str(Path("a", fs=fs).joinpath("b", "c")) == "a/b/c"
    assert ("top" / Path("x", fs=fs)).fs is fs


def test_segments_lend_their_filesystem():
    fs = MemoryFS("pure")
    assert Path(Path("a", fs=fs), "b").fs is fs


def test_default_filesystem_is_local():
    assert isinstance(Path("x").fs, Local)


def test_with_name_suffix_stem():
    p = Path("d/file.tar.gz", fs=MemoryFS("pure"))
    assert str(p.with_name("other.txt")) == "d/other.txt"
    assert str(p.with_suffix(".bz2")) == "d/file.tar.bz2"
    assert str(p.with_suffix("")) == "d/file.tar"
    assert str(p.with_stem("new")) == "d/new.gz"
    with pytest.raises(ValueError):
        p.with_suffix("bad")


def test_relative_to_and_match():
    fs = MemoryFS("pure")
    p = Path("/data/train/x.jpg", fs=fs)
    assert str(p.relative_to("/data")) == "train/x.jpg"
    assert str(p.relative_to(Path("/data/train", fs=fs))) == "x.jpg"
    assert p.is_relative_to("/data") and not p.is_relative_to("/other")
    with pytest.raises(ValueError):
        p.relative_to("/other")
    assert p.match("*.jpg") and p.match("train/*.jpg") and not p.match("*.png")


def test_equality_hash_and_order_depend_on_path_and_filesystem():
    a, b = MemoryFS("eq-a"), MemoryFS("eq-b")
    assert Path("x", fs=a) == Path("x", fs=MemoryFS("eq-a"))
    assert Path("x", fs=a) != Path("x", fs=b)
    assert Path("x", fs=a) != "x"
    assert len({Path("x", fs=a), Path("x", fs=MemoryFS("eq-a")), Path("y", fs=a)}) == 2
    assert sorted([Path("b", fs=a), Path("a", fs=a)]) == [Path("a", fs=a), Path("b", fs=a)]
    assert Path("a", fs=a) <= Path("a", fs=a) < Path("b", fs=a)
    assert Path("b", fs=a) >= Path("b", fs=a) > Path("a", fs=a)
    with pytest.raises(TypeError):
        _ = Path("a", fs=a) < Path("b", fs=b)


def test_fspath_is_the_path_as_written_on_any_filesystem(tmp_path):
    # as in PFIO 2.x: os.fspath / os.path functions see the path itself
    assert os.fspath(Path("/abs/f", fs=Local(str(tmp_path)))) == "/abs/f"
    assert os.fspath(Path("d/f", fs=MemoryFS("pure"))) == "d/f"


def test_local_path_of_local_paths(tmp_path):
    # a leading "/" is the filesystem's root, as in PFIO 2.x
    fs = Local(str(tmp_path))
    assert Path("f.txt", fs=fs).local_path() == str(tmp_path / "f.txt")
    assert Path("/abs/f", fs=fs).local_path() == str(tmp_path / "abs" / "f")
    assert Path("/", fs=fs).local_path() == str(tmp_path)


def test_local_path_of_other_filesystems_is_refused():
    with pytest.raises(TypeError, match="not on the local filesystem"):
        Path("f", fs=MemoryFS("pure")).local_path()


def test_repr_is_pfio2s():
    assert repr(Path("a/b", fs=MemoryFS("pure"))) == "Path('a/b')"


# -- filesystem operations ----------------------------------------------------------------

def test_exists_is_dir_is_file(tree):
    assert (tree / "a.txt").exists() and (tree / "a.txt").is_file()
    assert (tree / "d").is_dir() and not (tree / "d").is_file()
    missing = tree / "missing"
    assert not missing.exists() and not missing.is_dir() and not missing.is_file()
    assert not (tree / "a.txt" / "under").is_file()


def test_iterdir_yields_child_paths(tree):
    assert sorted(p.name for p in tree.iterdir()) == ["a.txt", "d", "empty"]
    assert sorted(str(p) for p in (tree / "d").iterdir()) == ["d/b.bin", "d/e"]


def test_iterdir_errors(tree):
    with pytest.raises(FileNotFoundError):
        list((tree / "missing").iterdir())
    with pytest.raises(NotADirectoryError):
        list((tree / "a.txt").iterdir())


def test_glob_and_rglob(tree):
    assert [str(p) for p in tree.glob("*.txt")] == ["a.txt"]
    assert [str(p) for p in tree.glob("d/*")] == ["d/b.bin", "d/e"]
    assert [str(p) for p in tree.rglob("*.txt")] == ["a.txt", "d/e/c.txt"]
    assert [str(p) for p in (tree / "d").rglob("*.txt")] == ["d/e/c.txt"]
    assert list((tree / "missing").glob("*")) == []


def test_read_and_write(tree):
    p = tree / "new" / "f.txt"
    (tree / "new").mkdir()
    assert p.write_text("héllo", encoding="utf-8") == 5
    assert p.read_text(encoding="utf-8") == "héllo"
    assert p.write_bytes(b"\x00\x01") == 2
    assert p.read_bytes() == b"\x00\x01"
    with p.open("rb") as f:
        assert f.read() == b"\x00\x01"
    with p.open("w") as f:
        f.write("text")
    with p.open() as f:
        assert f.read() == "text"


def test_read_missing_file(tree):
    with pytest.raises(FileNotFoundError):
        (tree / "missing").read_bytes()


def test_stat(tree):
    st = (tree / "d" / "b.bin").stat()
    assert st.size == 2 and not st.isdir()
    assert (tree / "d").stat().isdir()
    with pytest.raises(FileNotFoundError):
        (tree / "missing").stat()


def test_mkdir(tree):
    (tree / "m").mkdir()
    assert (tree / "m").is_dir()
    with pytest.raises(FileExistsError):
        (tree / "m").mkdir()
    (tree / "m").mkdir(exist_ok=True)
    with pytest.raises(FileNotFoundError):
        (tree / "x" / "y").mkdir()
    (tree / "x" / "y").mkdir(parents=True)
    assert (tree / "x" / "y").is_dir()
    (tree / "x" / "y").mkdir(parents=True, exist_ok=True)


def test_mkdir_exist_ok_does_not_hide_a_file(tree):
    with pytest.raises(FileExistsError):
        (tree / "a.txt").mkdir(exist_ok=True)


def test_touch(tree):
    p = tree / "t"
    p.touch()
    assert p.read_bytes() == b""
    (tree / "a.txt").touch()
    assert (tree / "a.txt").read_bytes() == b"A"
    with pytest.raises(FileExistsError):
        (tree / "a.txt").touch(exist_ok=False)


def test_unlink(tree):
    (tree / "a.txt").unlink()
    assert not (tree / "a.txt").exists()
    with pytest.raises(FileNotFoundError):
        (tree / "a.txt").unlink()
    (tree / "a.txt").unlink(missing_ok=True)
    with pytest.raises(IsADirectoryError):
        (tree / "empty").unlink()
    assert (tree / "empty").is_dir()


def test_rmdir(tree):
    (tree / "empty").rmdir()
    assert not (tree / "empty").exists()
    with pytest.raises(NotADirectoryError):
        (tree / "a.txt").rmdir()
    with pytest.raises(OSError):
        (tree / "d").rmdir()
    assert (tree / "d" / "b.bin").exists()
    with pytest.raises(FileNotFoundError):  # (also a NotADirectoryError, as PFIO 2.x)
        (tree / "missing").rmdir()


def test_rename(tree):
    new = (tree / "a.txt").rename(tree / "renamed.txt")
    assert new == tree / "renamed.txt"
    assert new.read_bytes() == b"A" and not (tree / "a.txt").exists()
    assert str((tree / "renamed.txt").rename("again.txt")) == "again.txt"
    with pytest.raises(FileNotFoundError):
        (tree / "missing").rename("x")


def test_rename_across_filesystems_is_refused(tree):
    with pytest.raises(ValueError, match="another filesystem"):
        (tree / "a.txt").rename(Path("x", fs=MemoryFS("elsewhere")))


def test_from_url_roots_the_path(tree):
    p = Path.from_url(f"mem://{tree.fs.name}/d") if isinstance(tree.fs, MemoryFS) \
        else Path.from_url(tree.fs.cwd + "/d")
    assert sorted(x.name for x in p.iterdir()) == ["b.bin", "e"]
