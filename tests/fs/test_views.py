"""``subfs`` is a view sharing per-process state (no pickling round trip), and backends warn
once about options they do not know."""

from __future__ import annotations

import io
import re
import warnings
import zipfile

import pytest

import pfio
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.fs.s3 import S3


@pytest.fixture
def archive(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("d/x", b"x")
        z.writestr("d/e/y", b"y")
    (tmp_path / "a.zip").write_bytes(buf.getvalue())
    with Local(str(tmp_path)).open_zip("a.zip") as z:
        yield z


def test_an_archive_view_shares_the_open_backing_file(archive):
    opened = archive._io.file
    view = archive.subfs("d")
    assert view._io is archive._io and view._io.file is opened
    assert view.open("x", "rb").read() == b"x" and view._io.file is opened
    assert sorted(view.list()) == ["e", "x"]


def test_closing_an_archive_view_releases_the_file_and_the_archive_reads_on(archive):
    view = archive.subfs("d")
    view.close()
    assert archive._io.file is None
    assert archive.open("d/e/y", "rb").read() == b"y"


def test_an_s3_view_shares_the_thread_pool():
    fs = S3("bkt", endpoint="http://127.0.0.1:1")
    view = fs.subfs("prefix")
    assert view.connection is fs.connection
    assert view.connection.executor() is fs.connection.executor()
    assert view.root == "prefix"
    fs.close()


# -- unknown options -------------------------------------------------------------------------

@pytest.mark.parametrize("url, option", [
    ("s3://bkt/p", "endpiont"),
    ("mem://views-options", "craete"),
    (".", "cwdd"),
])
def test_an_unknown_option_is_named_in_a_warning_once(url, option):
    with pytest.warns(UserWarning, match=repr(option)):
        pfio.from_url(url, **{option: "x"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pfio.from_url(url, **{option: "x"})


def test_pfio2_options_pass_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MemoryFS("views-v2", trace=True)
        S3("bkt", trace=True, endpoint="http://127.0.0.1:1")


def test_an_archive_names_an_unknown_option_in_a_warning(tmp_path):
    with zipfile.ZipFile(tmp_path / "w.zip", "w") as z:
        z.writestr("x", b"x")
    with pytest.warns(UserWarning, match="'whole_member_limt'"):
        Local(str(tmp_path)).open_zip("w.zip", whole_member_limt=1).close()


# -- views never escape their root -------------------------------------------------------
#
# A name that climbs out of a filesystem's root (``..`` beyond it, or an absolute path outside
# it) raises PermissionError naming both, and nothing is read or written; an absolute path
# inside the root is that file. ``outer`` holds ``top.txt`` (outside the view), ``a.zip`` and
# ``d/in.txt``; the view is ``outer.subfs("d")``. ``absolute(name)`` is the absolute path of
# ``outer``'s ``name`` in the backend's namespace (the local filesystem, the ``mem://`` store,
# the HDFS namespace, the bucket).

def _zip_holding_x() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("x", b"x")
    return buf.getvalue()


def _local_outer(tmp_path, request):
    return Local(str(tmp_path / "top"), create=True)


def _mem_outer(tmp_path, request):
    return MemoryFS(f"views-{request.node.name}", "top", create=True)


def _hdfs_outer(tmp_path, request):
    from pfio.fs.hdfs import Hdfs
    from pfio.testing.hdfs_standin import StandinFactory

    factory = StandinFactory(f"views-{request.node.name}")
    return Hdfs("/top", nameservice="cluster", client_factory=factory, create=True)


def _s3_outer(tmp_path, request):
    server = request.getfixturevalue("moto_server")
    credentials = server.credentials
    bucket = f"views-{abs(hash(request.node.name)) % 10**8}"
    fs = S3(bucket, prefix="top", endpoint=server.endpoint, create_bucket=True,
            aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
            region=credentials["AWS_DEFAULT_REGION"])
    request.addfinalizer(fs.close)
    return fs


@pytest.fixture(params=[_local_outer, _mem_outer, _hdfs_outer, _s3_outer],
                ids=["local", "mem", "hdfs", "s3"])
def outer(request, tmp_path, monkeypatch):
    """A writable filesystem rooted at a directory ``top`` (see above)."""
    for name in ("HADOOP_CONF_DIR", "HADOOP_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HADOOP_USER_NAME", "tester")
    fs = request.param(tmp_path, request)
    fs.absolute = (lambda name: str(tmp_path / "top" / name)) if isinstance(fs, Local) \
        else (lambda name: "/top/" + name)
    fs.makedirs("d")
    for name, data in {"top.txt": b"outer", "a.zip": _zip_holding_x(),
                       "d/in.txt": b"in"}.items():
        with fs.open(name, "wb") as f:
            f.write(data)
    return fs


@pytest.fixture
def view(outer):
    return outer.subfs("d")


def _refused(view, name):
    """``pytest.raises(PermissionError)`` whose message names ``name`` and the view's root."""
    return pytest.raises(PermissionError,
                         match=f"{re.escape(repr(name))}.*{re.escape(view._describe(''))}")


def test_dotdot_beyond_the_root_of_a_view_is_refused(view):
    with _refused(view, "../in.txt"):
        view.open("../in.txt", "rb")


def test_dotdot_above_a_view_does_not_read_the_file_there(view):
    with _refused(view, "../top.txt"):
        view.open("../top.txt", "rb")


def test_a_view_writes_nothing_for_a_dotdot_name(outer, view):
    """The regression: ``subfs("d").open("../x", "w")`` wrote ``d/x``."""
    with _refused(view, "../../new.txt"):
        view.open("../../new.txt", "wb")
    assert not outer.exists("d/new.txt") and not outer.exists("new.txt")


def test_dotdot_that_stays_inside_the_view_is_taken(view):
    assert view.open("e/../in.txt", "rb").read() == b"in"


def test_an_absolute_path_inside_the_root_is_that_file(outer, view):
    assert view.open(outer.absolute("d/in.txt"), "rb").read() == b"in"
    assert view.exists(outer.absolute("d")) and view.isdir(outer.absolute("d"))


def test_an_absolute_path_inside_the_root_is_written_there(outer, view):
    with view.open(outer.absolute("d/new.txt"), "wb") as f:
        f.write(b"new")
    assert outer.open("d/new.txt", "rb").read() == b"new"


def test_an_absolute_path_outside_the_root_is_refused(outer, view):
    with _refused(view, outer.absolute("top.txt")):
        view.open(outer.absolute("top.txt"), "rb")


def test_a_leading_slash_does_not_name_the_root_of_the_view(view):
    """``/in.txt`` is the file ``in.txt`` at the top of the store, outside the view."""
    with _refused(view, "/in.txt"):
        view.open("/in.txt", "rb")


def test_a_view_writes_nothing_for_an_absolute_path_outside(outer, view):
    with _refused(view, "/new.txt"):
        view.open("/new.txt", "wb")
    assert not outer.exists("d/new.txt") and not outer.exists("new.txt")


@pytest.mark.parametrize("call", [
    lambda v: list(v.list("..")), lambda v: v.stat("../top.txt"),
    lambda v: v.exists("../top.txt"), lambda v: v.isdir(".."),
    lambda v: v.glob("../*"), lambda v: v.subfs(".."), lambda v: v.open_zip("../a.zip"),
    lambda v: v.mkdir("../made"), lambda v: v.makedirs("../made/deep"),
], ids=["list", "stat", "exists", "isdir", "glob", "subfs", "open_zip", "mkdir", "makedirs"])
def test_every_operation_refuses_a_name_climbing_out(outer, view, call):
    with pytest.raises(PermissionError, match=re.escape(view._describe(""))):
        call(view)
    assert not outer.exists("made")


def test_remove_refuses_a_name_above_the_view(outer, view):
    with _refused(view, "../top.txt"):
        view.remove("../top.txt")
    assert outer.exists("top.txt")


def test_rename_refuses_a_source_above_the_view(outer, view):
    with _refused(view, "../top.txt"):
        view.rename("../top.txt", "stolen.txt")
    assert outer.exists("top.txt") and not outer.exists("d/stolen.txt")


def test_rename_refuses_a_destination_above_the_view(outer, view):
    with _refused(view, "../../moved.txt"):
        view.rename("in.txt", "../../moved.txt")
    assert outer.exists("d/in.txt")
    assert not outer.exists("moved.txt") and not outer.exists("d/moved.txt")


def test_glob_takes_an_absolute_pattern_inside_the_root(outer, view):
    assert view.glob(outer.absolute("d/*.txt")) == ["in.txt"]
    assert view.glob("*.txt") == ["in.txt"]


def test_glob_refuses_an_absolute_pattern_outside_the_root(view):
    with _refused(view, "/*.txt"):
        view.glob("/*.txt")


def test_a_view_at_an_absolute_path_inside_the_root(outer):
    assert sorted(outer.subfs(outer.absolute("d")).list()) == ["in.txt"]


def test_a_view_of_a_view_does_not_climb_out(view):
    nested = view.subfs("e")
    with pytest.raises(PermissionError):
        nested.subfs("../..")
    with pytest.raises(PermissionError):
        nested.open("../../top.txt", "rb")


@pytest.mark.parametrize("url", ["mem://views-from-url/top/d", "file://{tmp}/top/d"])
def test_a_filesystem_from_a_url_refuses_dotdot_at_its_root(tmp_path, url):
    (tmp_path / "top" / "d").mkdir(parents=True)
    pfio.from_url("mem://views-from-url/top/d", create=True).close()
    with pfio.from_url(url.format(tmp=tmp_path)) as fs:
        with pytest.raises(PermissionError, match="'../y.txt'"):
            fs.open("../y.txt", "w")
        assert list(fs.list()) == []
    assert not (tmp_path / "top" / "y.txt").exists()
    assert not MemoryFS("views-from-url", "top").exists("y.txt")


def test_a_local_view_refuses_etc_passwd(tmp_path):
    view = Local(str(tmp_path)).subfs(".")
    with pytest.raises(PermissionError, match="'/etc/passwd'"):
        view.open("/etc/passwd", "rb")


def test_a_local_root_opens_an_absolute_path_inside_it(tmp_path):
    """``/root/a/b`` given to ``Local(cwd="/root")`` opens ``/root/a/b``."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").write_bytes(b"b")
    assert Local(str(tmp_path)).open(str(tmp_path / "a" / "b"), "rb").read() == b"b"


def test_a_relative_local_root_measures_absolute_paths_from_the_working_directory(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "f").write_bytes(b"f")
    (tmp_path / "g").write_bytes(b"g")
    fs = Local("r")
    assert fs.open(str(tmp_path / "r" / "f"), "rb").read() == b"f"
    with pytest.raises(PermissionError, match=re.escape(repr(str(tmp_path / "g")))):
        fs.open(str(tmp_path / "g"), "rb")


def test_a_local_filesystem_without_a_root_still_takes_any_path(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"f")
    (tmp_path / "d").mkdir()
    assert Local().open(str(tmp_path / "d" / ".." / "f.txt"), "rb").read() == b"f"


def test_a_local_filesystem_without_a_root_globs_an_absolute_pattern(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"f")
    assert Local().glob(str(tmp_path / "*.txt")) == [str(tmp_path / "f.txt")]


def test_a_local_view_follows_a_symbolic_link_put_inside_it(tmp_path):
    """Names are confined, not links: a link placed in the root is the owner's choice
    (tests/fs/test_local_symlinks.py)."""
    (tmp_path / "outside.txt").write_bytes(b"linked")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link.txt").symlink_to(tmp_path / "outside.txt")
    assert Local(str(tmp_path / "root")).open("link.txt", "rb").read() == b"linked"


def test_an_s3_view_refuses_dotdot_beyond_its_prefix():
    fs = S3("bkt", prefix="a/b", endpoint="http://127.0.0.1:1")
    with pytest.raises(PermissionError, match="'../../c'"):
        fs.subfs("../../c")
    with pytest.raises(PermissionError, match="'/c'"):
        fs.subfs("/c")
    assert fs.subfs("/a/b/c").root == "a/b/c"
    assert fs.subfs("c/..").root == "a/b"
    fs.close()


def test_s3_at_the_bucket_refuses_dotdot_and_takes_a_leading_slash_from_the_bucket():
    fs = S3("bkt", endpoint="http://127.0.0.1:1")
    assert fs._key("/x/y") == "x/y"
    with pytest.raises(PermissionError, match="'../x'"):
        fs._key("../x")
    fs.close()
