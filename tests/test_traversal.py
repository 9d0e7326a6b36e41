"""Hostile names: keys and names that would reach outside the directory a recursive copy
writes to (``data/../x``, ``data//abs/x``) are never followed there.

S3 keys are created with boto3 on the moto server (real HTTP): S3 stores any key verbatim.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
from collections.abc import Iterator
from typing import Any

import pytest

import pfio
from pfio._uri import is_relative_name
from pfio.cli import main
from pfio.fs.memory import MemoryFS


@pytest.fixture
def client(s3_env, s3_server) -> Iterator[Any]:
    import boto3

    c = boto3.client("s3", endpoint_url=s3_env)
    yield c
    c.close()


def _files_under(top) -> dict[str, bytes]:
    found = {}
    for directory, _, files in os.walk(top):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, top)] = f.read()
    return found


@pytest.mark.parametrize("name, ok", [
    ("a", True), ("a/b/c.txt", True), ("dir/", True), (".hidden", True), ("a..b", True),
    ("", False), ("/", False), ("/abs", False), ("a//b", False), ("./a", False),
    ("a/./b", False), ("..", False), ("../x", False), ("a/../b", False), ("a/..", False),
    ("a//", False),
])
def test_is_relative_name(name, ok):
    assert is_relative_name(name) is ok


# -- S3: listing and opening agree on what a key is called ---------------------------------

@pytest.mark.parametrize("hostile", [
    "data/../escape.txt", "data//escape.txt", "data/./escape.txt", "data/x/../escape.txt",
])
def test_s3_list_skips_keys_that_open_as_another_object(client, s3_bucket, caplog, hostile):
    client.put_object(Bucket=s3_bucket, Key="data/ok.txt", Body=b"ok")
    client.put_object(Bucket=s3_bucket, Key=hostile, Body=b"hostile")
    with caplog.at_level(logging.WARNING, logger="pfio.fs.s3.operations"), \
            pfio.from_url(f"s3://{s3_bucket}/data") as fs:
        assert sorted(fs.list(recursive=True)) == ["ok.txt"]
        top = sorted(fs.list())  # data/x/ is a real prefix; only the key in it is skipped
        assert top in (["ok.txt"], ["ok.txt", "x/"])
    assert f"s3://{s3_bucket}/{hostile}" in caplog.text


def test_s3_every_listed_name_opens_as_the_object_listed(client, s3_bucket):
    keys = {"d/a.txt": b"a", "d//a.txt": b"twin", "d/b/./c.txt": b"c", "d/b/c.txt": b"c2"}
    for key, body in keys.items():
        client.put_object(Bucket=s3_bucket, Key=key, Body=body)
    with pfio.from_url(f"s3://{s3_bucket}/d") as fs:
        names = [n for n in fs.list(recursive=True) if not n.endswith("/")]
        assert sorted(names) == ["a.txt", "b/c.txt"]
        for name in names:
            with fs.open(name, "rb") as f:
                assert f.read() == keys["d/" + name]


# -- cp -r and pack ------------------------------------------------------------------------

@pytest.mark.parametrize("relative", ["../outside/pwn.txt", "/ABS/pwn.txt"])
def test_cp_r_from_s3_writes_nothing_outside_the_destination(client, s3_bucket, tmp_path,
                                                             relative):
    """``data/<name>`` is listed as ``<name>``; the object pfio opens under that name (the
    normalised key) exists too, so an unchecked copy writes it outside DEST."""
    dest = tmp_path / "dest"
    outside = tmp_path / "outside"
    name = relative.replace("/ABS", str(outside))
    opened = posixpath.normpath(posixpath.join("/data", name)).lstrip("/")
    for k in ("data/ok.txt", "data/" + name, opened):
        client.put_object(Bucket=s3_bucket, Key=k, Body=b"x")
    assert main(["cp", "-r", "-q", f"s3://{s3_bucket}/data/", str(dest)]) == 0
    assert _files_under(dest) == {"ok.txt": b"x"}
    assert not outside.exists()
    assert sorted(os.listdir(tmp_path)) == ["dest"]


class _VerbatimFS(MemoryFS):
    """A third-party backend that lists the names it is given verbatim, whatever they are
    (pfio's own backends never list such names)."""

    def __init__(self, store: str, listed: list[str]) -> None:
        super().__init__(store)
        self.listed = listed

    def list(self, path: str = "", recursive: bool = False, detail: bool = False) -> Any:
        for name in self.listed:
            yield pfio.FileStat(name, 1) if detail else name

    def subfs(self, path: str) -> _VerbatimFS:
        return self


@pytest.fixture
def verbatim(request) -> Iterator[list[str]]:
    """``verbatim://store/`` lists the names in the list this returns (ok.txt exists)."""
    store, listed = f"verbatim-{request.node.name}", ["ok.txt"]
    with MemoryFS(store).open("ok.txt", "wb") as f:
        f.write(b"x")
    pfio.register_filesystem("verbatim", lambda uri, **_: _VerbatimFS(store, listed))
    yield listed
    pfio.unregister_filesystem("verbatim")


@pytest.mark.parametrize("hostile", ["../pwn.txt", "/ABS/pwn.txt", "a//b.txt", "./ok.txt"])
def test_cp_r_refuses_a_source_listing_names_outside(verbatim, tmp_path, capsys, hostile):
    hostile = hostile.replace("/ABS", str(tmp_path))
    verbatim.append(hostile)
    dest = tmp_path / "dest"
    assert main(["cp", "-r", "-q", "verbatim://store/", str(dest)]) == 1
    err = capsys.readouterr().err
    assert "refusing to copy" in err and repr(hostile) in err and "verbatim://store/" in err
    assert os.listdir(tmp_path) == []  # refused before anything was written


@pytest.mark.parametrize("hostile", ["../pwn.txt", "/ABS/pwn.txt"])
def test_pack_refuses_a_source_listing_names_outside(verbatim, tmp_path, capsys, hostile):
    verbatim.append(hostile.replace("/ABS", str(tmp_path)))
    archive = tmp_path / "out.zip"
    assert main(["pack", "-q", "verbatim://store/", str(archive)]) == 1
    assert "refusing to copy" in capsys.readouterr().err
    assert not archive.exists()


def test_s3_a_prefix_holding_only_skipped_keys_lists_empty(client, s3_bucket):
    client.put_object(Bucket=s3_bucket, Key="data/x/../y.txt", Body=b"y")
    with pfio.from_url(f"s3://{s3_bucket}/data") as fs:
        assert fs.isdir("x")
        assert list(fs.list("x")) == []


HOSTILE_MEMBERS = {"top/ok.txt": b"ok", "top/../../../evil.txt": b"evil",
                   "top//abs/evil2.txt": b"evil2", "/top/x/../../../../evil3.txt": b"evil3"}


def _hostile_zip(path) -> None:
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        for name, data in HOSTILE_MEMBERS.items():
            zf.writestr(name, data)


def _hostile_tar(path) -> None:
    import io
    import tarfile

    with tarfile.open(path, "w") as tf:
        for name, data in HOSTILE_MEMBERS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("make, name", [(_hostile_zip, "a.zip"), (_hostile_tar, "a.tar")])
def test_cp_r_out_of_an_archive_stays_inside_the_destination(tmp_path, make, name):
    """Archives normalise member names (with a warning): ``top/../../../evil.txt`` is
    ``evil.txt``, outside ``top``; nothing lands outside the destination."""
    make(tmp_path / name)
    dest = tmp_path / "dest"
    assert main(["cp", "-r", "-q", str(tmp_path / name / "top"), str(dest)]) == 0
    assert _files_under(dest) == {"ok.txt": b"ok", "abs/evil2.txt": b"evil2"}
    assert sorted(os.listdir(tmp_path)) == sorted([name, "dest"])


# -- views of archives never escape their root ---------------------------------------------
#
# A name a user gives an archive or a view of one is taken as on every filesystem: one that
# climbs out of the root (``..`` beyond it, an absolute path outside it; an absolute path is
# measured from the archive's top) raises PermissionError naming both, and nothing is read
# or written. (Names stored *in* an archive keep their own rule, above: a warning, and the
# member is read under the archive.) The archive holds ``top.txt``, ``inner.zip`` and
# ``d/in.txt``; the view is ``subfs("d")``.

ARCHIVE_MEMBERS = {"top.txt": b"outer", "d/in.txt": b"in"}


def _zip_of(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _tar_of(members: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(params=["zip", "tar"])
def archive_view(request, tmp_path) -> Iterator[Any]:
    members = {**ARCHIVE_MEMBERS, "inner.zip": _zip_of({"x": b"x"})}
    make = _zip_of if request.param == "zip" else _tar_of
    (tmp_path / f"a.{request.param}").write_bytes(make(members))
    with pfio.from_url(str(tmp_path / f"a.{request.param}")) as archive:
        yield archive.subfs("d")


def test_an_archive_view_refuses_dotdot_at_its_root(archive_view):
    with pytest.raises(PermissionError, match=r"'\.\./\.\./in\.txt'.*a\.(zip|tar)"):
        archive_view.open("../../in.txt", "rb")


def test_an_archive_view_refuses_a_member_above_it(archive_view):
    with pytest.raises(PermissionError, match="'../top.txt'"):
        archive_view.open("../top.txt", "rb")


def test_an_archive_view_takes_an_absolute_name_from_the_archive_top(archive_view):
    assert archive_view.open("/d/in.txt", "rb").read() == b"in"
    with pytest.raises(PermissionError, match="'/top.txt'"):
        archive_view.exists("/top.txt")
    with pytest.raises(PermissionError, match="'/in.txt'"):
        archive_view.open("/in.txt", "rb")


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_an_archive_top_takes_names_as_its_members_are_named(tmp_path, kind):
    """At the top of an archive, names keep the rule of the names stored in it (``..`` at
    the top stays there, as zipfile opens a member stored as ``../x``): nothing is ever
    outside the archive."""
    make = _zip_of if kind == "zip" else _tar_of
    (tmp_path / f"a.{kind}").write_bytes(make(ARCHIVE_MEMBERS))
    with pfio.from_url(str(tmp_path / f"a.{kind}")) as archive:
        assert archive.open("/top.txt", "rb").read() == b"outer"
        assert archive.open("../top.txt", "rb").read() == b"outer"
        assert sorted(n.rstrip("/") for n in archive.subfs("..").list()) == ["d", "top.txt"]


@pytest.mark.parametrize("call", [
    lambda v: list(v.list("..")), lambda v: v.stat("../top.txt"), lambda v: v.glob("../*"),
    lambda v: v.open_zip("../inner.zip"), lambda v: v.subfs(".."),
], ids=["list", "stat", "glob", "open_zip", "subfs"])
def test_an_archive_view_refuses_names_climbing_out(archive_view, call):
    with pytest.raises(PermissionError):
        call(archive_view)


def test_a_zip_view_open_for_writing_refuses_dotdot_names(tmp_path):
    import zipfile

    with pfio.from_url(str(tmp_path)) as fs, fs.open_zip("w.zip", "w") as archive:
        with pytest.raises(PermissionError, match="'../../x.txt'"):
            archive.subfs("d").open("../../x.txt", "wb")
        with archive.subfs("d").open("/d/y.txt", "wb") as f:
            f.write(b"y")
    with zipfile.ZipFile(tmp_path / "w.zip") as zf:
        assert zf.namelist() == ["d/y.txt"]


def test_an_http_cache_entry_is_not_named_for_a_name_climbing_out(tmp_path):
    from pfio.cache.http_cached_fs import canonical_name
    from pfio.fs.local import Local

    view = Local(str(tmp_path)).subfs("d")
    with pytest.raises(PermissionError, match="'../x'"):
        canonical_name(view, "../x")
    assert canonical_name(view, str(tmp_path / "d" / "x")) == "file:/" + str(tmp_path / "d" / "x")


@pytest.fixture
def cache_server() -> Iterator[str]:
    from pfio.testing import OnMemoryHTTPServerForTest, make_http_server

    with make_http_server() as (_, port):
        yield f"http://127.0.0.1:{port}/cache/"
    OnMemoryHTTPServerForTest.files.clear()


@pytest.mark.parametrize("name", ["../x.txt", "/x.txt"])
def test_an_http_cached_view_refuses_a_name_climbing_out(cache_server, tmp_path, name):
    """Refused before the cache server is asked: no entry is read or stored."""
    from pfio.cache.http_cached_fs import HTTPCachedFS
    from pfio.fs.local import Local
    from pfio.testing import OnMemoryHTTPServerForTest

    (tmp_path / "x.txt").write_bytes(b"outside")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_bytes(b"inside")
    fs = HTTPCachedFS(cache_server, Local(str(tmp_path))).subfs("d")
    with pytest.raises(PermissionError, match=re.escape(repr(name))):
        fs.open(name, "rb")
    assert OnMemoryHTTPServerForTest.files == {}
    with fs.open(str(tmp_path / "d" / "x.txt"), "rb") as f:  # inside: that file
        assert f.read() == b"inside"


def test_an_http_cached_view_globs_inside_itself(cache_server, tmp_path):
    from pfio.cache.http_cached_fs import HTTPCachedFS
    from pfio.fs.local import Local

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_bytes(b"x")
    fs = HTTPCachedFS(cache_server, Local(str(tmp_path))).subfs("d")
    assert fs.glob(str(tmp_path / "d" / "*.txt")) == ["x.txt"]
    with pytest.raises(PermissionError):
        fs.glob("../*")


def test_a_cached_view_refuses_a_name_climbing_out(tmp_path):
    """``from_url(url, cache=True)``: the object cache reads through the same names."""
    (tmp_path / "x.txt").write_bytes(b"outside")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_bytes(b"inside")
    with pfio.from_url(str(tmp_path), cache=str(tmp_path / "cache")) as fs:
        view = fs.subfs("d")
        with pytest.raises(PermissionError, match="'../x.txt'"):
            view.open("../x.txt", "rb")
        with pytest.raises(PermissionError, match="'../x.txt'"):
            view.glob("../x.txt")
        assert view.open(str(tmp_path / "d" / "x.txt"), "rb").read() == b"inside"
        assert view.glob(str(tmp_path / "d" / "*.txt")) == ["x.txt"]


def test_an_fsspec_filesystem_with_a_root_refuses_a_name_climbing_out():
    """A scheme served through fsspec (``memory://``) confines names as every backend does."""
    pytest.importorskip("fsspec")
    with pfio.from_url("memory://traversal-fsspec/root", create=True) as fs:
        with pytest.raises(PermissionError, match="'../x.txt'.*traversal-fsspec/root"):
            fs.open("../x.txt", "w")
        with fs.open("/traversal-fsspec/root/y.txt", "w") as f:  # inside: that file
            f.write("y")
        assert list(fs.list()) == ["y.txt"]
    import fsspec

    assert not fsspec.filesystem("memory").exists("/traversal-fsspec/x.txt")
    assert not fsspec.filesystem("memory").exists("/traversal-fsspec/root/x.txt")
