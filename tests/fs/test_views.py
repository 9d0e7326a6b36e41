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
    assert sorted(view.list()) == ["e/", "x"]


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
