"""``pfio.v2.S3`` as PFIO 2.10 code drives it, on the moto server over real HTTP: the
attributes it reads, the file classes ``open`` returns, text reads, directories renamed and
removed through ``pfio.v2.Path``, zips created on S3, and ``trace=True``."""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
import zipfile

import pytest

import pfio
from pfio.testing import ZipForTest
from pfio.v2 import S3, Path, Zip, from_url, open_url

DATA = b"0123456789"


@pytest.fixture
def base(s3_env: str, s3_bucket: str) -> str:
    """The URL of a prefix holding ``foo.data`` (ten bytes)."""
    url = f"s3://{s3_bucket}/base"
    with open_url(f"{url}/foo.data", "wb") as f:
        f.write(DATA)
    return url


@pytest.fixture
def zip_url(s3_env: str, s3_bucket: str, tmp_path) -> str:
    """The URL of a zip on S3 whose member ``file`` holds ``b"content"``."""
    local = tmp_path / "t.zip"
    ZipForTest(local, {"file": b"content"})
    url = f"s3://{s3_bucket}/t.zip"
    with open_url(url, "wb") as f:
        f.write(local.read_bytes())
    return url


# -- attributes --------------------------------------------------------------------------

def test_cwd_is_the_prefix_as_pfio2_had_it(s3_env: str, s3_bucket: str) -> None:
    assert from_url(f"s3://{s3_bucket}/base").cwd == "/base"
    assert S3(s3_bucket, prefix="base").cwd == "base"
    assert S3(s3_bucket).cwd == ""
    assert S3(s3_bucket, prefix="base").subfs("inner").cwd == "base/inner"


def test_kwargs_are_what_pfio2_gave_boto3(s3_env: str, s3_bucket: str) -> None:
    fs = S3(s3_bucket, aws_access_key_id="key-id", aws_secret_access_key="the-secret")
    assert fs.kwargs == {"aws_access_key_id": "key-id", "aws_secret_access_key": "the-secret",
                         "endpoint_url": s3_env}
    assert (fs.aws_access_key_id, fs.aws_secret_access_key) == ("key-id", "the-secret")
    assert "the-secret" not in repr(fs)


def test_keys_expand_environment_variables(s3_env: str, s3_bucket: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PFIO_TEST_KEY_ID", "expanded-id")
    monkeypatch.setenv("PFIO_TEST_SECRET", "expanded-secret")
    fs = S3(s3_bucket, aws_access_key_id="$PFIO_TEST_KEY_ID",
            aws_secret_access_key="${PFIO_TEST_SECRET}")
    assert fs.kwargs["aws_access_key_id"] == "expanded-id"
    assert fs.kwargs["aws_secret_access_key"] == "expanded-secret"


def test_botocore_config_holds_the_timeouts(s3_env: str, s3_bucket: str) -> None:
    fs = from_url(f"s3://{s3_bucket}/base", connect_timeout=300, read_timeout="120")
    assert fs.botocore_config == {"connect_timeout": 300, "read_timeout": 120}
    assert (fs.connect_timeout, fs.read_timeout) == (300, 120)


def test_botocore_config_holds_pfio_s_default_timeouts(s3_env: str, s3_bucket: str) -> None:
    assert S3(s3_bucket).botocore_config == {"connect_timeout": 5, "read_timeout": 10}


def test_making_one_sends_nothing_and_imports_no_botocore() -> None:
    script = ("import sys, pfio\n"
              "fs = pfio.v2.S3('b', prefix='/p', endpoint='http://127.0.0.1:9',"
              " connect_timeout=3, create=True)\n"
              "print(fs.cwd, fs.kwargs, fs.botocore_config, fs.hostname)\n"
              "assert 'botocore' not in sys.modules\n")
    checkout = os.path.dirname(os.path.dirname(pfio.__file__))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": checkout})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "/p" and done.stdout.split()[-1] == "127.0.0.1"


def test_client_is_a_botocore_client_of_the_bucket(base: str) -> None:
    fs = from_url(base)
    answer = fs.client.head_object(Bucket=fs.bucket, Key="base/foo.data")
    assert answer["ContentLength"] == len(DATA)


# -- the file classes open returns ---------------------------------------------------------

def test_a_binary_read_is_a_buffered_reader_whose_raw_is_the_raw_file(base: str) -> None:
    with from_url(base).open("foo.data", "rb") as f:
        assert isinstance(f, io.BufferedReader)
        assert isinstance(f.raw, io.RawIOBase)
        assert f.read(3) == b"012" and f.peek()[:2] == b"34"


def test_buffering_zero_gives_the_raw_file(base: str) -> None:
    with from_url(base, buffering=0).open("foo.data", "rb") as f:
        assert isinstance(f, io.RawIOBase) and not isinstance(f, io.BufferedIOBase)
        assert f.read(4) == b"0123" and f.readall() == b"456789"
    with from_url(base).open("foo.data", "rb", buffering=0) as f:
        assert isinstance(f, io.RawIOBase)


def test_the_raw_file_reads_on_from_the_position_of_the_buffered_one(base: str) -> None:
    with open_url(f"{base}/foo.data", "rb") as f:
        assert f.read() == DATA
        f.seek(5)
        assert f.raw.readall() == b"56789"
        f.seek(5)
        assert f.read(1000) == b"56789"


def test_the_position_survives_pickling_of_either_file(base: str) -> None:
    for buffering in (-1, 0):
        with from_url(base).open("foo.data", "rb", buffering=buffering) as f:
            f.seek(7)
            with pickle.loads(pickle.dumps(f)) as clone:
                assert type(clone) is type(f) and clone.read() == b"789"


def test_closing_the_buffered_file_closes_its_raw_file(base: str) -> None:
    f = from_url(base).open("foo.data", "rb")
    f.close()
    assert f.closed and f.raw.closed
    with pytest.raises(ValueError):
        f.read()


def test_text_is_decoded_in_chunks_of_the_object_s_size(base: str) -> None:
    text = "first line\nsecond line\nthird line\n"
    with open_url(f"{base}/lines.txt", "w") as f:
        f.write(text)
    with open_url(f"{base}/lines.txt") as f:
        assert f._CHUNK_SIZE == len(text)
        assert f.readlines() == text.splitlines(keepends=True)
    with from_url(base, buffering=4096).open("lines.txt") as f:
        assert f._CHUNK_SIZE == 4096


# -- directories -----------------------------------------------------------------------------

def test_path_rename_moves_a_directory(base: str) -> None:
    fs = from_url(base)
    for name in ("lib/zoo/abc.txt", "lib/setup.py"):
        (Path(name, fs=fs)).write_text(name)
    moved = Path("lib", fs=fs).rename("local")
    assert str(moved) == "local" and (moved / "setup.py").read_text() == "lib/setup.py"
    assert moved.is_dir() and not Path("lib", fs=fs).exists()


def test_path_rmdir_of_a_prefix_emptied_by_unlink_does_nothing(base: str) -> None:
    fs = from_url(base)
    directory = Path("made", fs=fs)
    directory.mkdir()
    (directory / "dummy").write_bytes(b"dummy")
    assert directory.is_dir()
    (directory / "dummy").unlink()
    directory.rmdir()
    assert not directory.is_dir()


def test_a_recursive_listing_names_the_keys(base: str) -> None:
    fs = from_url(base)
    (Path("baz/foo.txt", fs=fs)).write_text("foo")
    assert sorted(fs.list(recursive=True)) == ["baz/foo.txt", "foo.data"]


# -- zips on S3 ------------------------------------------------------------------------------

def test_force_type_zip_with_mode_w_creates_the_archive(s3_env: str, s3_bucket: str) -> None:
    url = f"s3://{s3_bucket}/made.bin"
    with from_url(url, force_type="zip", mode="w") as z:
        with z.open("dir/f", "wb") as f:
            f.write(b"bar")
    with from_url(url, force_type="zip") as z:
        assert z.open("dir/f", "rb").read() == b"bar"


def test_a_zip_url_with_mode_w_creates_the_archive(s3_env: str, s3_bucket: str) -> None:
    with from_url(f"s3://{s3_bucket}/new.zip", mode="w") as z:
        with z.open("file", "wb") as f:
            f.write(b"foo")
    with from_url(f"s3://{s3_bucket}/new.zip") as z:
        assert z.open("file", "rb").read() == b"foo"


def test_a_zip_s_fileobj_is_buffered_and_raw_with_buffering_zero(zip_url: str) -> None:
    with from_url(zip_url) as z:
        assert isinstance(z, Zip) and isinstance(z.fileobj, io.BufferedReader)
        assert zipfile.is_zipfile(z.fileobj)
    with from_url(zip_url, buffering=0) as z:
        assert z.kwargs == {"buffering": 0}
        assert isinstance(z.fileobj, io.RawIOBase) and zipfile.is_zipfile(z.fileobj)
        assert z.open("file", "rb").read() == b"content"


def test_the_raw_file_is_pfio_2s_object_reader(base: str, zip_url: str) -> None:
    """PFIO 2.10's own test_s3_zip checks ``isinstance(z.fileobj, pfio.v2.s3._ObjectReader)``
    with ``buffering=0`` (issue 37)."""
    import pfio.v2.s3

    with from_url(zip_url, buffering=0) as z:
        assert isinstance(z.fileobj, pfio.v2.s3._ObjectReader)
    with from_url(base).open("foo.data", "rb", buffering=0) as f:
        assert isinstance(f, pfio.v2.s3._ObjectReader)
    with from_url(base).open("foo.data", "rb") as f:
        assert not isinstance(f, pfio.v2.s3._ObjectReader)


# -- trace=True ------------------------------------------------------------------------------

def _recorded(ppe) -> list[str]:
    state = ppe.profiler.get_tracer().state_dict()
    return [event["name"] for event in json.loads(state["_event_list"])]


def test_trace_records_requests_as_pfio2_s_boto3_calls(base: str) -> None:
    ppe = pytest.importorskip("pytorch_pfn_extras")
    ppe.profiler.clear_tracer()
    with from_url(base, trace=True) as fs:
        with fs.open("t.txt", "w") as f:
            f.write("bar")
        assert "pfio.boto3:put_object" in _recorded(ppe)
        with fs.open("t.txt") as f:
            assert f.read() == "bar"
        assert {"pfio.v2.S3:open", "pfio.v2.S3:read", "pfio.boto3:get_object"} <= \
            set(_recorded(ppe))
    ppe.profiler.clear_tracer()


def test_without_trace_no_request_is_recorded(base: str) -> None:
    ppe = pytest.importorskip("pytorch_pfn_extras")
    ppe.profiler.clear_tracer()
    with from_url(base).open("foo.data", "rb") as f:
        f.read()
    assert _recorded(ppe) == []


def test_trace_reaches_the_requests_of_a_zip_on_s3(zip_url: str) -> None:
    ppe = pytest.importorskip("pytorch_pfn_extras")
    ppe.profiler.clear_tracer()
    with from_url(zip_url, trace=True) as z:
        assert z.open("file", "rb").read() == b"content"
    assert {"pfio.v2.Zip:create-zipfile-obj", "pfio.v2.S3:read",
            "pfio.boto3:get_object"} <= set(_recorded(ppe))
    ppe.profiler.clear_tracer()
