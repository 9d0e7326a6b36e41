"""``pfio.v2.pathlib``: PFIO 2.10's ``PurePath`` / ``Path`` methods and the ``copy`` and
``unlink`` helpers."""

from __future__ import annotations

import secrets
from pathlib import PurePosixPath

import pytest

from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.v2.pathlib import Path, PurePath, copy, unlink


@pytest.fixture
def mem():
    return MemoryFS(f"pathlib-{secrets.token_hex(4)}", create=True)


def _write(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_path_is_a_pure_path(mem):
    p = Path("a/b.txt", fs=mem)
    assert isinstance(p, PurePath)
    assert PurePath("a", "b.txt", fs=mem) == p
    assert (p.sep, p.drive, p.scheme, p.is_reserved()) == ("/", "", "mem", False)


def test_pure_path_does_not_reach_the_filesystem(mem):
    pure = PurePath("a", fs=mem) / "b"
    assert type(pure) is PurePath and str(pure) == "a/b"
    assert not hasattr(pure, "exists")


def test_with_segments_keeps_class_and_filesystem(mem):
    p = Path("a", fs=mem).with_segments("x", "y")
    assert type(p) is Path and p.fs is mem and str(p) == "x/y"


def test_relative_to_walk_up(mem):
    p = Path("a/b/c", fs=mem)
    assert str(p.relative_to("a/x", walk_up=True)) == "../b/c"
    with pytest.raises(ValueError):
        p.relative_to("a/x")
    with pytest.raises(ValueError, match="both absolute"):
        p.relative_to("/a", walk_up=True)


def test_match_case_sensitivity(mem):
    p = Path("dir/Image.PNG", fs=mem)
    assert not p.match("*.png")
    assert p.match("*.png", case_sensitive=False)
    assert p.match("*.PNG", case_sensitive=True)


def test_as_uri(tmp_path, mem):
    assert Path("/a b", fs=Local(str(tmp_path))).as_uri() == (tmp_path / "a b").as_uri()
    assert Path("/k/v", fs=mem).as_uri().endswith("/k/v")
    assert Path("/k/v", fs=mem).as_uri().startswith("mem://")


def test_as_uri_of_a_relative_path_is_refused(mem):
    with pytest.raises(ValueError, match="relative"):
        Path("k", fs=mem).as_uri()


def test_several_segments_to_relative_to_are_joined_with_a_warning(mem):
    p = Path("/etc/conf/a", fs=mem)
    with pytest.warns(DeprecationWarning):
        assert str(p.relative_to("/", "etc")) == "conf/a"
    with pytest.warns(DeprecationWarning):
        assert p.is_relative_to("/etc", "conf")


def test_absolute_and_resolve_anchor_at_the_filesystem_root(tmp_path):
    fs = Local(str(tmp_path))
    p = Path("d/../f", fs=fs)
    assert str(p.absolute()) == "/d/../f"
    assert str(p.resolve()) == "/f"
    _write(p.resolve())
    assert p.resolve(strict=True).read_bytes() == b"x"
    assert (tmp_path / "f").read_bytes() == b"x"
    with pytest.raises(FileNotFoundError):
        Path("missing", fs=fs).resolve(strict=True)


def test_leading_slash_is_the_filesystem_root(tmp_path, mem):
    _write(Path("/top/f", fs=mem), b"rooted")
    assert Path("top/f", fs=mem).read_bytes() == b"rooted"
    local = Path("/a.txt", fs=Local(str(tmp_path)))
    local.write_text("in the root")
    assert (tmp_path / "a.txt").read_text() == "in the root"
    assert local.as_uri() == (tmp_path / "a.txt").as_uri()


def test_samefile_is_not_implemented_as_in_pfio2(tmp_path):
    fs = Local(str(tmp_path))
    with pytest.raises(NotImplementedError):
        Path("a/../b", fs=fs).samefile("b")


@pytest.mark.parametrize("segments", [(), ("",), (".",), ("/",), ("d/e",), ("/x/y.txt",),
                                      ("caf\u00e9",)])
def test_bytes_of_a_pure_path_is_that_of_pathlib(mem, segments):
    assert bytes(PurePath(*segments, fs=mem)) == bytes(PurePosixPath(*segments))
    assert bytes(Path(*segments, fs=mem)) == bytes(PurePosixPath(*segments))


def test_uri_of_the_local_root_ends_with_a_slash_as_in_pfio2(tmp_path):
    fs = Local(str(tmp_path))
    assert Path("/", fs=fs).as_uri() == tmp_path.as_uri() + "/"
    assert Path("/d/f", fs=fs).as_uri() == (tmp_path / "d" / "f").as_uri()


def test_uri_of_a_root_without_a_path_has_no_slash(mem):
    assert Path("/", fs=mem).as_uri() == mem._describe("").rstrip("/")
    assert Path("/k", fs=mem).as_uri() == mem._describe("").rstrip("/") + "/k"


def test_iterdir_of_nothing_is_both_file_not_found_and_not_a_directory(tmp_path):
    missing = Path("missing", fs=Local(str(tmp_path)))
    with pytest.raises(FileNotFoundError):
        next(missing.iterdir())
    with pytest.raises(NotADirectoryError):
        next(missing.iterdir())


def test_rmdir_of_nothing_is_both_file_not_found_and_not_a_directory(tmp_path):
    missing = Path("my/local", fs=Local(str(tmp_path)))
    with pytest.raises(NotADirectoryError) as caught:
        missing.rmdir()
    assert isinstance(caught.value, FileNotFoundError)


def test_rmdir_of_a_file_is_not_a_directory(tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(NotADirectoryError) as caught:
        Path("f", fs=Local(str(tmp_path))).rmdir()
    assert not isinstance(caught.value, FileNotFoundError)


def test_directory_round_trip_as_pfio2_code_writes_it(tmp_path):
    p = Path("my/local", fs=Local(str(tmp_path)))
    (tmp_path / "my").mkdir()
    p.mkdir(parents=False, exist_ok=False)
    p.mkdir(parents=False, exist_ok=True)
    (p / "dummy").write_bytes(b"dummy")
    assert p.exists() and p.is_dir()
    (p / "dummy").unlink()
    p.rmdir()
    assert not p.is_dir() and not p.exists()


class _PrefixFS(MemoryFS):
    """A filesystem whose directories exist only through their files, as S3's prefixes."""

    implicit_directories = True


def test_rmdir_of_a_prefix_gone_with_its_last_file_does_nothing(mem):
    fs = _PrefixFS(f"prefixes-{secrets.token_hex(4)}", create=True)
    with pytest.raises(FileNotFoundError):
        fs.stat("gone")
    Path("gone", fs=fs).rmdir()
    with pytest.raises(FileNotFoundError):
        Path("gone", fs=mem).rmdir()


def test_follow_symlinks_false_is_unsupported(mem):
    p = _write(Path("f", fs=mem))
    assert p.exists(follow_symlinks=True) and p.stat(follow_symlinks=True).size == 1
    with pytest.raises(NotImplementedError):
        p.exists(follow_symlinks=False)
    with pytest.raises(NotImplementedError):
        p.stat(follow_symlinks=False)


@pytest.mark.parametrize("case_sensitive", [True, False])
def test_glob_case_sensitive_is_unsupported(mem, case_sensitive):
    _write(Path("d/A.txt", fs=mem))
    d = Path("d", fs=mem)
    assert [str(p) for p in d.rglob("A.*", case_sensitive=None)] == ["d/A.txt"]
    with pytest.raises(NotImplementedError):
        list(d.glob("*.txt", case_sensitive=case_sensitive))


@pytest.mark.parametrize("call", [
    lambda p: Path.cwd(), lambda p: Path.home(), lambda p: p.expanduser(),
    lambda p: p.chmod(mode=0o600), lambda p: p.lchmod(0o600), lambda p: p.lstat(),
    lambda p: p.owner(), lambda p: p.group(), lambda p: p.readlink(),
    lambda p: p.symlink_to("t"), lambda p: p.hardlink_to("t"), lambda p: p.walk(),
    lambda p: p.is_symlink(), lambda p: p.is_junction(), lambda p: p.is_mount(),
    lambda p: p.is_socket(), lambda p: p.is_fifo(), lambda p: p.is_block_device(),
    lambda p: p.is_char_device(),
])
def test_what_pfio_filesystems_lack_raises_not_implemented(mem, call):
    with pytest.raises(NotImplementedError, match="not supported"):
        call(Path("f", fs=mem))


def test_copy_a_file_across_filesystems(tmp_path, mem):
    src = _write(Path("src.bin", fs=Local(str(tmp_path))), b"payload")
    dst = Path("copy.bin", fs=mem)
    copy(src, dst, chunk_size=3)
    assert dst.read_bytes() == b"payload"


def test_copy_a_tree(mem):
    _write(Path("t/a", fs=mem), b"A")
    _write(Path("t/sub/b", fs=mem), b"B")
    copy(Path("t", fs=mem), Path("u", fs=mem))
    assert Path("u/a", fs=mem).read_bytes() == b"A"
    assert Path("u/sub/b", fs=mem).read_bytes() == b"B"


def test_copy_errors(mem):
    f = _write(Path("f", fs=mem))
    d = _write(Path("d/x", fs=mem)).parent
    with pytest.raises(IsADirectoryError):
        copy(f, d)
    with pytest.raises(NotADirectoryError):
        copy(d, f)
    with pytest.raises(FileNotFoundError):
        copy(Path("nope", fs=mem), f)


def test_unlink_a_file_and_a_tree(mem):
    f = _write(Path("f", fs=mem))
    _write(Path("t/sub/x", fs=mem))
    unlink(f)
    unlink(Path("t", fs=mem))
    assert not f.exists() and not Path("t", fs=mem).exists()
    with pytest.raises(FileNotFoundError):
        unlink(f)


def test_pfio_2s_directory_feature_helper_says_which_filesystems_have_directories(
        tmp_path, s3_env, s3_bucket):
    """PFIO 2.10's tests ask ``_has_directory_feature(fs)`` before testing what a directory
    does once it is empty: S3 has none of its own."""
    from pfio.v2 import from_url
    from pfio.v2.pathlib import _has_directory_feature

    assert _has_directory_feature(Local(str(tmp_path)))
    assert _has_directory_feature(MemoryFS())
    assert not _has_directory_feature(from_url(f"s3://{s3_bucket}"))
