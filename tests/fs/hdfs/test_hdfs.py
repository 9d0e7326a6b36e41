"""The HDFS backend: construction from URLs and configuration, clients, errors, processes.

The file operations themselves are covered by the backend contract suite (tests/contract),
which runs them over the stand-in client; these tests cover what is HDFS-specific.
"""

from __future__ import annotations

import errno
import io
import multiprocessing
import pickle
import socket

import pytest

import pfio
from pfio.fs.hdfs import Hdfs
from pfio.fs.hdfs import client as hdfs_client
from pfio.fs.hdfs.client import HdfsTarget, check_reachable, translate
from pfio.fs.hdfs.config import Address
from pfio.testing.hdfs_standin import StandinFactory, StandinReader

HDFS_SITE = """<configuration>
  <property><name>dfs.nameservices</name><value>cluster</value></property>
  <property><name>dfs.namenode.rpc-address.cluster</name><value>127.0.0.1:{port}</value></property>
</configuration>"""


@pytest.fixture(autouse=True)
def no_hadoop_env(monkeypatch):
    for name in ("HADOOP_CONF_DIR", "HADOOP_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HADOOP_USER_NAME", "tester")


@pytest.fixture
def factory(request):
    return StandinFactory(f"unit-{request.node.name}")


@pytest.fixture
def closed_port():
    """A local TCP port that nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def listening_port():
    """A local TCP port that accepts connections (and never answers)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield s.getsockname()[1]


# -- roots, name services, users -----------------------------------------------------------

def test_from_url_takes_netloc_and_root(factory):
    fs = pfio.from_url("hdfs://cluster/data/train", client_factory=factory)
    assert isinstance(fs, Hdfs)
    assert fs.nameservice == "cluster"
    assert fs.root == "/data/train"


def test_relative_root_starts_at_home(factory):
    fs = Hdfs("runs/1", nameservice="cluster", client_factory=factory)
    assert fs.root == "/user/tester/runs/1"


def test_default_root_is_home(factory):
    assert Hdfs(nameservice="cluster", client_factory=factory).root == "/user/tester"


def test_user_option_sets_home(factory):
    fs = Hdfs("x", nameservice="cluster", user="alice", client_factory=factory)
    assert fs.root == "/user/alice/x"


def test_empty_netloc_uses_hadoop_conf_dir(tmp_path, monkeypatch, factory):
    (tmp_path / "hdfs-site.xml").write_text(HDFS_SITE.format(port=8020))
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    fs = pfio.from_url("hdfs:///data", client_factory=factory)
    assert fs.nameservice == "cluster"
    assert fs._target.addresses == (Address("127.0.0.1", 8020),)


def test_empty_netloc_without_configuration(factory):
    with pytest.raises(ValueError, match="name service"):
        pfio.from_url("hdfs:///data", client_factory=factory)


def test_unknown_client_name():
    with pytest.raises(ValueError, match="native"):
        Hdfs(nameservice="cluster", client="libhdfs3")


def test_kerberos_options_reach_the_target(factory):
    fs = Hdfs(nameservice="cluster", kerberos_principal="bob/h@REALM",
              kerberos_keytab="/k.keytab", client_factory=factory)
    assert fs._target.kerberos == {"principal": "bob/h@REALM", "keytab": "/k.keytab"}


def test_describe_names_nameservice(factory):
    fs = Hdfs("/d", nameservice="cluster", client_factory=factory)
    with pytest.raises(FileNotFoundError) as info:
        fs.stat("missing")
    assert info.value.filename == "hdfs://cluster/d/missing"


def test_create_makes_root(factory):
    Hdfs("/a/b", nameservice="cluster", client_factory=factory, create=True)
    assert Hdfs("/a", nameservice="cluster", client_factory=factory).isdir("b")


def test_dotdot_above_the_root_is_refused_even_at_the_top(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    with pytest.raises(PermissionError, match="'../../x'.*hdfs://cluster/"):
        fs.open("../../x", "wb")
    assert list(fs.list()) == []


def test_an_absolute_path_inside_the_root_is_that_file(factory):
    fs = Hdfs("/a", nameservice="cluster", client_factory=factory, create=True)
    with fs.open("/a/x", "wb") as f:
        f.write(b"x")
    assert fs.open("x", "rb").read() == b"x"
    with pytest.raises(PermissionError, match="'/x'.*hdfs://cluster/a"):
        fs.open("/x", "wb")


def test_temporary_files_are_not_listed(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    fs.makedirs("d")
    with fs.open("d/f", "wb") as f:
        f.write(b"being written")
        assert list(fs.list("d")) == []
        assert list(fs.list(recursive=True)) == ["d/"]
    assert list(fs.list("d")) == ["f"]


# -- unreachable name nodes --------------------------------------------------------------

def test_closed_port_fails_with_address(closed_port):
    fs = Hdfs("/", nameservice=f"127.0.0.1:{closed_port}", connect_timeout=5)
    with pytest.raises(ConnectionError, match=f"127.0.0.1:{closed_port}"):
        fs.exists("x")


def test_closed_port_of_configured_nameservice(tmp_path, monkeypatch, closed_port):
    (tmp_path / "hdfs-site.xml").write_text(HDFS_SITE.format(port=closed_port))
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    fs = pfio.from_url("hdfs:///")
    with pytest.raises(ConnectionError, match=f"127.0.0.1:{closed_port}"):
        list(fs.list())


def test_check_reachable_tries_every_address(closed_port, listening_port):
    addresses = [Address("127.0.0.1", closed_port), Address("127.0.0.1", listening_port)]
    assert check_reachable(addresses, 5) == Address("127.0.0.1", listening_port)


def test_check_reachable_lists_all_failures(closed_port):
    addresses = [Address("127.0.0.1", closed_port), Address("127.0.0.1", closed_port)]
    with pytest.raises(ConnectionError) as info:
        check_reachable(addresses, 5)
    assert str(info.value).count(f"127.0.0.1:{closed_port}") == 2


def test_native_client_created_when_namenode_answers(listening_port):
    hdfs_native = pytest.importorskip("hdfs_native")
    target = HdfsTarget(f"hdfs://127.0.0.1:{listening_port}",
                        (Address("127.0.0.1", listening_port),))
    assert isinstance(hdfs_client.native_client(target), hdfs_native.Client)


def test_pyarrow_client_without_libhdfs_says_so(listening_port):
    pytest.importorskip("pyarrow")
    fs = Hdfs("/", nameservice=f"127.0.0.1:{listening_port}", client="pyarrow")
    try:
        client = fs.client
    except OSError as e:
        assert "libhdfs" in str(e) and "client='native'" in str(e)
    else:
        pytest.skip(f"libhdfs is installed here: {client!r}")


# -- processes -----------------------------------------------------------------------

def _client_pid(fs, queue) -> None:
    queue.put((fs.client.created_pid, multiprocessing.current_process().pid))


def test_client_recreated_after_fork(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    parent_pid = fs.client.created_pid
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    process = ctx.Process(target=_client_pid, args=(fs, queue))
    process.start()
    created, child = queue.get(timeout=60)
    process.join(timeout=60)
    assert created == child != parent_pid


def test_pickle_drops_client(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    first = fs.client
    clone = pickle.loads(pickle.dumps(fs))
    assert clone._client is None
    assert clone.client is not first


def test_close_drops_client(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    first = fs.client
    fs.close()
    assert fs.client is not first


# -- errors --------------------------------------------------------------------------

@pytest.mark.parametrize("raised, expected, code", [
    (RuntimeError("RPC error: org.apache.hadoop.security.AccessControlException "
                  "Permission denied"), PermissionError, errno.EACCES),
    (RuntimeError("RPC error: org.apache.hadoop.fs.ParentNotDirectoryException /a"),
     NotADirectoryError, errno.ENOTDIR),
    (RuntimeError("RPC error: org.apache.hadoop.fs.PathIsNotEmptyDirectoryException x"),
     OSError, errno.ENOTEMPTY),
    (RuntimeError("RPC error: java.io.FileNotFoundException Parent directory doesn't exist"),
     FileNotFoundError, errno.ENOENT),
    (RuntimeError("RPC error: org.apache.hadoop.fs.FileAlreadyExistsException x"),
     FileExistsError, errno.EEXIST),
    (FileNotFoundError("file not found: /x"), FileNotFoundError, errno.ENOENT),
    (IsADirectoryError("path is a directory: /x"), IsADirectoryError, errno.EISDIR),
    (RuntimeError("Unknown protocol failure"), OSError, errno.EIO),
])
def test_translate(raised, expected, code):
    error = translate(raised, "hdfs://ns/x")
    assert type(error) is expected
    assert error.errno == code
    assert error.filename == "hdfs://ns/x"


def test_translate_not_implemented():
    assert isinstance(translate(NotImplementedError("ec"), "p"), io.UnsupportedOperation)


def test_write_into_denied_directory(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    fs.mkdir("locked")
    fs.client.set_permission("/locked", 0o555)
    with pytest.raises(PermissionError):
        with fs.open("locked/f", "wb") as f:
            f.write(b"x")
    assert list(fs.list("locked")) == []


def test_write_below_a_file(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    with fs.open("f", "wb") as f:
        f.write(b"x")
    with pytest.raises(NotADirectoryError):
        fs.open("f/g", "wb")


def test_exclusive_loses_race_at_close(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    f = fs.open("x", "xb")
    f.write(b"mine")
    with fs.open("x", "wb") as other:
        other.write(b"theirs")
    with pytest.raises(FileExistsError):
        f.close()
    assert fs.open("x", "rb").read() == b"theirs"
    assert sorted(fs.list()) == ["x"]


# -- reader ----------------------------------------------------------------------------

def test_read_at_leaves_position(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    with fs.open("f", "wb") as f:
        f.write(b"0123456789")
    with fs.open("f", "rb") as f:
        f.read(2)
        assert f.read_at(5, 3) == b"567"
        assert f.read_at(8, 10) == b"89"
        assert f.read_at(20, 1) == b""
        assert f.read(2) == b"23"


def test_read_at_negative(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    with fs.open("f", "wb") as f:
        f.write(b"x")
    with fs.open("f", "rb") as f, pytest.raises(ValueError):
        f.read_at(-1, 1)


def test_seek_negative(factory):
    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    with fs.open("f", "wb") as f:
        f.write(b"x")
    with fs.open("f", "rb") as f, pytest.raises(OSError):
        f.seek(-1)


def test_standin_reader_refuses_reads_past_end():
    with pytest.raises(RuntimeError):
        StandinReader(b"abc").read_range(2, 5)


def test_reads_are_traced(factory):
    import pfio.trace

    fs = Hdfs("/", nameservice="cluster", client_factory=factory)
    with fs.open("f", "wb") as f:
        f.write(b"abc")
    pfio.trace.reset()
    with pfio.trace.tracing():
        with fs.open("f", "rb") as f:
            f.read()
        requests = pfio.trace.metrics().requests
    assert requests[("hdfs", "READ")].bytes == 3


def test_v2_face_exports_the_same_class(factory):
    import pfio.v2

    assert pfio.v2.Hdfs is Hdfs
    assert pfio.v2.Hdfs("/a", nameservice="cluster", client_factory=factory).cwd == "/a"


def _exists_in_child(fs, queue) -> None:
    try:
        queue.put(fs.exists("x"))
    except Exception as e:  # reported to the parent
        queue.put(f"{type(e).__name__}: {e}")


def test_spawned_worker_connects_lazily_and_fails_fast(closed_port):
    fs = Hdfs("/", nameservice=f"127.0.0.1:{closed_port}", connect_timeout=5)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_exists_in_child, args=(fs, queue))
    process.start()
    result = queue.get(timeout=60)
    process.join(timeout=60)
    assert result.startswith("ConnectionError") and f"127.0.0.1:{closed_port}" in result
