import io
import os
import stat

import pytest

from pfio.fs.local import Local


@pytest.fixture
def fs(tmp_path):
    return Local(tmp_path)


def test_missing_root_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        Local(tmp_path / "nope")


def test_file_as_root_is_not_a_directory(tmp_path):
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        Local(tmp_path / "f")


def test_create_makes_the_root(tmp_path):
    Local(tmp_path / "a" / "b", create=True)
    assert (tmp_path / "a" / "b").is_dir()


def test_default_root_is_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x").write_text("here")
    assert Local().open("x", "r").read() == "here"
    assert Local().cwd == str(tmp_path)


def test_write_publishes_only_on_close(fs, tmp_path):
    f = fs.open("out.bin", "wb")
    f.write(b"partial")
    f.flush()
    assert not (tmp_path / "out.bin").exists()
    f.close()
    assert (tmp_path / "out.bin").read_bytes() == b"partial"


def test_exception_in_with_keeps_the_old_file(fs, tmp_path):
    (tmp_path / "model.pt").write_bytes(b"old")
    with pytest.raises(RuntimeError), fs.open("model.pt", "wb") as f:
        f.write(b"new but broken")
        raise RuntimeError("training crashed")
    assert (tmp_path / "model.pt").read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["model.pt"]


def test_exception_in_text_with_publishes_nothing(fs, tmp_path):
    with pytest.raises(KeyError), fs.open("log.txt", "w") as f:
        f.write("line\n")
        raise KeyError("x")
    assert os.listdir(tmp_path) == []


def test_exclusive_mode_refuses_an_existing_file(fs, tmp_path):
    (tmp_path / "x").write_bytes(b"1")
    with pytest.raises(FileExistsError):
        fs.open("x", "xb")


def test_exclusive_mode_fails_if_the_file_appears_before_close(fs, tmp_path):
    f = fs.open("x", "xb")
    f.write(b"mine")
    (tmp_path / "x").write_bytes(b"theirs")
    with pytest.raises(FileExistsError) as error:
        f.close()
    assert error.value.filename == str(tmp_path / "x")
    assert (tmp_path / "x").read_bytes() == b"theirs"
    assert os.listdir(tmp_path) == ["x"]


def test_written_files_get_the_usual_permissions(fs, tmp_path):
    old = os.umask(0o022)
    try:
        with fs.open("p", "wb") as f:
            f.write(b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "p").stat().st_mode) == 0o644


def test_append_writes_in_place(fs, tmp_path):
    (tmp_path / "a.log").write_text("1\n")
    with fs.open("a.log", "a") as f:
        f.write("2\n")
    assert (tmp_path / "a.log").read_text() == "1\n2\n"


def test_update_mode_reads_and_writes(fs, tmp_path):
    (tmp_path / "u").write_bytes(b"abcdef")
    with fs.open("u", "r+b") as f:
        f.seek(2)
        f.write(b"XY")
    assert (tmp_path / "u").read_bytes() == b"abXYef"


def test_stat_has_the_posix_fields(fs, tmp_path):
    (tmp_path / "s").write_bytes(b"12345")
    st = fs.stat("s")
    assert (st.size, st.isdir(), st.nlink) == (5, False, 1)
    assert st.last_modified == pytest.approx(os.stat(tmp_path / "s").st_mtime)


def test_absolute_paths_are_taken_as_is_without_a_root(tmp_path):
    (tmp_path / "abs").write_text("a")
    assert Local().open(str(tmp_path / "abs"), "r").read() == "a"


def test_an_absolute_path_inside_the_root_of_a_rooted_local_is_that_file(tmp_path):
    """A ``Local`` with ``cwd`` is rooted there: an absolute path inside the root is that
    file (as in PFIO 2.x), one outside it is refused (see tests/fs/test_views.py)."""
    (tmp_path / "abs").write_text("a")
    assert Local(tmp_path / "..").open(str(tmp_path / "abs"), "r").read() == "a"
    with pytest.raises(PermissionError, match=repr(str(tmp_path / "abs"))):
        Local(tmp_path / "d", create=True).open(str(tmp_path / "abs"), "r")


def test_opening_a_directory_for_writing_is_an_error(fs, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        fs.open("d", "wb")


def test_binary_mode_rejects_encoding(fs):
    with pytest.raises(ValueError, match="binary mode"):
        fs.open("x", "wb", encoding="utf-8")


def test_invalid_mode_is_rejected(fs):
    with pytest.raises(ValueError, match="invalid mode"):
        fs.open("x", "rw")


def test_binary_read_is_the_reader_open_rb_makes(fs, tmp_path):
    (tmp_path / "r.bin").write_bytes(b"0123456789")
    with fs.open("r.bin", "rb") as f, open(tmp_path / "r.bin", "rb") as plain:
        assert type(f) is type(plain)
        assert (f.name, f.mode) == (plain.name, plain.mode)
        assert f.raw._blksize == plain.raw._blksize
        assert f.read(4) == b"0123" and f.tell() == 4


def test_unbuffered_binary_read_is_a_raw_file(fs, tmp_path):
    (tmp_path / "r.bin").write_bytes(b"x")
    with fs.open("r.bin", "rb", buffering=0) as f:
        assert isinstance(f, io.FileIO) and f.read() == b"x"


def test_binary_read_of_a_directory_is_an_error(fs, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        fs.open("d", "rb")


def test_binary_read_of_a_url_is_the_same_reader(tmp_path):
    from pfio import open_url

    (tmp_path / "u.bin").write_bytes(b"url")
    with open_url(f"file://{tmp_path}/u.bin", "rb") as f:
        assert type(f) is io.BufferedReader and f.read() == b"url"


# -- names: a name builtin open takes, pfio takes; errors name the target ------------------

@pytest.mark.parametrize("name", ["n" * 240, "é" * 120, "n" * 255])
def test_long_names_are_written_like_builtin_open(fs, tmp_path, name):
    with open(tmp_path / "builtin", "w") as f:  # the filesystem takes the name
        f.write("x")
    with fs.open(name, "w") as f:
        f.write("long")
    assert (tmp_path / name).read_text() == "long"
    assert sorted(os.listdir(tmp_path)) == sorted(["builtin", name])


def test_name_too_long_for_the_filesystem_names_the_target(fs, tmp_path):
    name = "n" * 300
    with pytest.raises(OSError) as builtin_error:
        open(tmp_path / name, "w")
    with pytest.raises(OSError) as error:
        fs.open(name, "w")
    assert error.value.errno == builtin_error.value.errno
    assert error.value.filename == str(tmp_path / name)
    assert os.listdir(tmp_path) == []


def test_write_into_a_missing_directory_names_the_target(fs, tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        fs.open("no/such/f", "wb")
    assert error.value.filename == str(tmp_path / "no/such/f")


@pytest.mark.parametrize("base", ["short", "n" * 240, "é" * 127, "n" * 255])
def test_temporary_names_fit_name_max(base):
    from pfio.fs.writers import NAME_MAX, is_temporary_name, temporary_name

    name = temporary_name(base)
    assert len(name.encode()) <= NAME_MAX
    assert is_temporary_name(name)
    assert name.startswith("." + base[:20])


def test_temporary_files_are_not_listed(fs, tmp_path):
    (tmp_path / "d").mkdir()
    for leftover in (".f.0123456789ab.pfio-tmp", "d/.g.0123456789ab.pfio-tmp"):
        (tmp_path / leftover).write_bytes(b"a killed writer's")
    (tmp_path / "f").write_bytes(b"")
    assert sorted(fs.list()) == ["d/", "f"]
    assert sorted(fs.list(recursive=True)) == ["d/", "f"]
    assert [st.filename for st in fs.list("d", detail=True)] == []


def test_open_temporary_file_is_not_listed(fs):
    with fs.open("f", "wb") as f:
        f.write(b"x")
        assert list(fs.list()) == []


# -- durability: spying on os.fsync (a power cut cannot be tested honestly) ---------------

@pytest.fixture
def fsyncs(monkeypatch):
    """The ``(is_directory, inode)`` of the file of each ``os.fsync`` from now on."""
    calls = []
    real = os.fsync

    def spy(fd):
        st = os.fstat(fd)
        calls.append((stat.S_ISDIR(st.st_mode), st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return calls


@pytest.mark.parametrize("mode", ["wb", "w", "xb"])
def test_close_syncs_the_file_then_its_directory(fs, tmp_path, fsyncs, mode):
    with fs.open("f", mode) as f:
        f.write(b"data" if "b" in mode else "data")
        assert fsyncs == []
    assert fsyncs == [(False, os.stat(tmp_path / "f").st_ino),
                      (True, os.stat(tmp_path).st_ino)]


def test_aborted_write_syncs_nothing(fs, fsyncs):
    with pytest.raises(RuntimeError), fs.open("f", "wb") as f:
        f.write(b"partial")
        raise RuntimeError
    assert fsyncs == []
