import io
import pickle
import threading

import pytest

import pfio
from pfio.fs.memory import MemoryFS


@pytest.fixture
def fs(request):
    return MemoryFS(request.node.name)


def test_stores_are_shared_by_name(fs):
    with fs.open("a/b.txt", "w") as f:
        f.write("shared")
    assert pfio.from_url(f"mem://{fs.name}/a").open("b.txt", "r").read() == "shared"


def test_stores_with_other_names_are_separate(fs):
    with fs.open("x", "wb") as f:
        f.write(b"1")
    assert not MemoryFS(fs.name + "-other").exists("x")


def test_writes_create_parent_directories(fs):
    with fs.open("deep/er/file", "wb") as f:
        f.write(b"x")
    assert fs.isdir("deep/er")


def test_mkdir_needs_the_parent(fs):
    with pytest.raises(FileNotFoundError):
        fs.mkdir("no/parent")


def test_dotdot_does_not_climb_above_the_store(fs):
    with fs.open("top", "wb") as f:
        f.write(b"t")
    with pytest.raises(PermissionError, match="'../../top'"):
        fs.open("../../top", "rb")
    assert fs.open("/top", "rb").read() == b"t"


def test_update_modes_are_unsupported(fs):
    with pytest.raises(io.UnsupportedOperation, match="update"):
        fs.open("x", "r+b")


def test_removing_the_top_is_refused(fs):
    with pytest.raises(PermissionError):
        fs.remove("", recursive=True)


def test_pickled_fs_sees_the_same_store(fs):
    with fs.open("p", "wb") as f:
        f.write(b"pickled")
    clone = pickle.loads(pickle.dumps(fs.subfs("")))
    assert clone.open("p", "rb").read() == b"pickled"


def test_concurrent_writers_and_readers(fs):
    def work(n):
        for i in range(50):
            with fs.open(f"t{n}/f{i}", "wb") as f:
                f.write(bytes([n]) * i)
            assert fs.open(f"t{n}/f{i}", "rb").read() == bytes([n]) * i

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for name in fs.list(recursive=True) if not name.endswith("/")) == 400


def test_reader_has_peek_and_name(fs):
    with fs.open("pk", "wb") as f:
        f.write(b"abcdef")
    with fs.open("pk", "rb") as f:
        f.read(2)
        assert f.peek(2) == b"cd"
        assert f.read() == b"cdef"
        assert f.name == f"mem://{fs.name}/pk"


def test_moving_a_directory_into_itself_is_refused(fs):
    fs.makedirs("a/b")
    with pytest.raises(OSError, match="into itself"):
        fs.rename("a", "a/b/c")
