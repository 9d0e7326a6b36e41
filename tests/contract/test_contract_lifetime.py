"""Contract: views (subfs), pickling, other processes, containers, context managers."""

from __future__ import annotations

import importlib.util
import multiprocessing
import pickle

import pytest


def write(fs, path: str, data: bytes = b"data") -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


def read(fs, path: str) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read()


def read_in_child(fs, path: str, queue) -> None:
    """Process target: read ``path`` and put the bytes (or the error's repr) on ``queue``."""
    try:
        queue.put(read(fs, path))
    except Exception as e:  # reported to the parent, which asserts on it
        queue.put(repr(e))


def run_in(start_method: str, fs, path: str) -> object:
    ctx = multiprocessing.get_context(start_method)
    queue = ctx.Queue()
    process = ctx.Process(target=read_in_child, args=(fs, path, queue))
    process.start()
    try:
        return queue.get(timeout=60)
    finally:
        process.join(timeout=60)


# -- subfs --------------------------------------------------------------------------

def test_subfs_sees_files_below(fs):
    fs.makedirs("sub/inner", exist_ok=True)
    write(fs, "sub/inner/f", b"below")
    sub = fs.subfs("sub")
    assert read(sub, "inner/f") == b"below"
    assert sorted(sub.list()) == ["inner/"]


def test_subfs_writes_land_below(fs):
    fs.makedirs("sub", exist_ok=True)
    sub = fs.subfs("sub")
    write(sub, "new", b"x")
    assert read(fs, "sub/new") == b"x"


def test_subfs_leaves_parent_root(fs):
    fs.makedirs("sub", exist_ok=True)
    write(fs, "top")
    fs.subfs("sub")
    assert read(fs, "top") == b"data"


# -- pickling and processes -------------------------------------------------------------

def test_pickle_roundtrip(fs):
    write(fs, "f", b"pickled")
    clone = pickle.loads(pickle.dumps(fs))
    assert read(clone, "f") == b"pickled"


def test_pickle_after_use(fs):
    write(fs, "f")
    list(fs.list())
    clone = pickle.loads(pickle.dumps(fs))
    assert sorted(clone.list()) == ["f"]


def test_use_after_fork(fs):
    write(fs, "f", b"forked")
    assert run_in("fork", fs, "f") == b"forked"


@pytest.mark.parametrize("start_method", ["spawn", "forkserver"])
def test_use_in_new_interpreter(backend, start_method):
    backend.require("shared_across_processes", "files live in this process only")
    write(backend.fs, "f", b"spawned")
    assert run_in(start_method, backend.fs, "f") == b"spawned"


def test_context_manager_closes(fs):
    with fs as entered:
        assert entered is fs
    fs.close()


# -- containers ---------------------------------------------------------------------

def test_zip_written_and_read_on_backend(fs):
    with fs.open_zip("a.zip", "w") as z:
        with z.open("dir/m.txt", "w") as f:
            f.write("member")
    with fs.open_zip("a.zip") as z:
        assert sorted(z.list(recursive=True)) == ["dir/m.txt"]  # "dir" is only implied
        assert list(z.list()) == ["dir"]
        with z.open("dir/m.txt", "r") as f:
            assert f.read() == "member"


def test_zip_member_missing(fs):
    with fs.open_zip("a.zip", "w") as z:
        with z.open("m", "wb") as f:
            f.write(b"x")
    with fs.open_zip("a.zip") as z:
        with pytest.raises(FileNotFoundError):
            z.open("other")


def test_tar_read_on_backend(fs):
    if importlib.util.find_spec("pfio.containers.tar") is None:
        pytest.skip("pfio.containers.tar is not there yet")
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("t/m.txt")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"tarred"))
    write(fs, "a.tar", buffer.getvalue())
    with fs.open_tar("a.tar") as tar_fs:
        assert read(tar_fs, "t/m.txt") == b"tarred"
