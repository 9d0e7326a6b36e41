"""``subfs`` is a view sharing per-process state (no pickling round trip), and backends warn
once about options they do not know."""

from __future__ import annotations

import io
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
# A filesystem rooted somewhere takes names as a chroot does: ``..`` at the root stays at
# the root and a leading ``/`` names the root. ``outer`` holds ``top.txt`` (outside the
# view), ``a.zip`` and ``d/in.txt``; the view is ``outer.subfs("d")``.

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
    fs.makedirs("d")
    for name, data in {"top.txt": b"outer", "a.zip": _zip_holding_x(),
                       "d/in.txt": b"in"}.items():
        with fs.open(name, "wb") as f:
            f.write(data)
    return fs


@pytest.fixture
def view(outer):
    return outer.subfs("d")


def test_dotdot_at_the_root_of_a_view_stays_there(view):
    assert view.open("../in.txt", "rb").read() == b"in"


def test_a_view_does_not_read_a_file_above_it(view):
    with pytest.raises(FileNotFoundError):
        view.open("../top.txt", "rb")


def test_a_view_writes_dotdot_names_inside_itself(outer, view):
    with view.open("../../new.txt", "wb") as f:
        f.write(b"new")
    assert outer.open("d/new.txt", "rb").read() == b"new"
    assert not outer.exists("new.txt")


def test_a_leading_slash_names_the_root_of_the_view(view):
    assert view.open("/in.txt", "rb").read() == b"in"
    assert not view.exists("/top.txt")


def test_list_of_dotdot_lists_the_view(view):
    assert sorted(view.list("..")) == ["in.txt"]


def test_stat_does_not_see_above_the_view(view):
    with pytest.raises(FileNotFoundError):
        view.stat("../top.txt")


def test_exists_and_isdir_do_not_see_above_the_view(view):
    assert not view.exists("../top.txt")
    assert view.isdir("..") and view.exists("../../in.txt")


def test_remove_does_not_reach_above_the_view(outer, view):
    with pytest.raises(FileNotFoundError):
        view.remove("../top.txt")
    assert outer.exists("top.txt")


def test_rename_source_does_not_reach_above_the_view(outer, view):
    with pytest.raises(FileNotFoundError):
        view.rename("../top.txt", "stolen.txt")
    assert outer.exists("top.txt") and not outer.exists("d/stolen.txt")


def test_rename_destination_stays_inside_the_view(outer, view):
    view.rename("in.txt", "../../moved.txt")
    assert outer.exists("d/moved.txt") and not outer.exists("moved.txt")


def test_makedirs_stays_inside_the_view(outer, view):
    if isinstance(outer, S3):
        pytest.skip("makedirs on S3 makes nothing (as in PFIO 2.x): nothing to confine")
    view.makedirs("../../made/deep")
    assert outer.isdir("d/made/deep") and not outer.exists("made")


def test_open_zip_does_not_reach_above_the_view(view):
    with pytest.raises(FileNotFoundError):
        view.open_zip("../a.zip")


def test_glob_does_not_match_above_the_view(view):
    assert view.glob("../*") == ["in.txt"]
    assert view.glob("/*.txt") == ["in.txt"]


def test_a_view_of_a_view_does_not_climb_out(view):
    nested = view.subfs("..").subfs("../..")
    assert sorted(nested.list()) == ["in.txt"]
    assert not nested.exists("top.txt")


def test_a_view_at_dotdot_is_the_view_itself(view):
    assert sorted(view.subfs("../..").list()) == ["in.txt"]


@pytest.mark.parametrize("url", ["mem://views-from-url/top/d", "file://{tmp}/top/d"])
def test_a_filesystem_from_a_url_is_rooted_at_its_path(tmp_path, url):
    (tmp_path / "top" / "d").mkdir(parents=True)
    pfio.from_url("mem://views-from-url/top/d", create=True).close()
    with pfio.from_url(url.format(tmp=tmp_path)) as fs:
        with fs.open("../y.txt", "w") as f:
            f.write("y")
        assert sorted(fs.list()) == ["y.txt"]
    assert not (tmp_path / "top" / "y.txt").exists()
    assert not MemoryFS("views-from-url", "top").exists("y.txt")


def test_a_view_does_not_open_an_absolute_os_path_outside(tmp_path, view):
    (tmp_path / "secret.txt").write_bytes(b"secret")
    with pytest.raises(FileNotFoundError):
        view.open(str(tmp_path / "secret.txt"), "rb")


def test_a_local_view_does_not_open_etc_passwd(tmp_path):
    view = Local(str(tmp_path)).subfs(".")
    with pytest.raises(FileNotFoundError):
        view.open("/etc/passwd", "rb")


def test_a_local_filesystem_without_a_root_still_takes_any_path(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"f")
    (tmp_path / "d").mkdir()
    assert Local().open(str(tmp_path / "d" / ".." / "f.txt"), "rb").read() == b"f"


def test_a_local_view_follows_a_symbolic_link_put_inside_it(tmp_path):
    """Names are confined, not links: a link placed in the root is the owner's choice
    (tests/fs/test_local_symlinks.py)."""
    (tmp_path / "outside.txt").write_bytes(b"linked")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link.txt").symlink_to(tmp_path / "outside.txt")
    assert Local(str(tmp_path / "root")).open("link.txt", "rb").read() == b"linked"


def test_an_s3_view_of_dotdot_stays_under_its_prefix():
    fs = S3("bkt", prefix="a/b", endpoint="http://127.0.0.1:1")
    assert fs.subfs("../../c").root == "a/b/c"
    assert fs.subfs("/c").subfs("..").root == "a/b/c"
    fs.close()
