"""pfio used the way PFIO 2.x code uses it: ``import pfio`` and nothing else, then
``pfio.v2...`` and ``pfio.cache...``, on local files, zips, S3 (the moto server over real
HTTP, and moto's in-process ``mock_aws``) and the caches."""

from __future__ import annotations

import io
import zipfile

import pytest

import pfio
import pfio.testing


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


# -- local -----------------------------------------------------------------------------------

def test_local_files(tmp_path):
    with pfio.v2.from_url(str(tmp_path)) as fs:
        fs.makedirs("d/e", exist_ok=True)
        with fs.open("d/a.txt", "w") as f:
            f.write("hello")
        assert sorted(fs.list("d")) == ["a.txt", "e/"]
        assert sorted(fs.list("d", recursive=True)) == ["a.txt", "e/"]
        st = fs.stat("d/a.txt")
        assert isinstance(st, pfio.v2.LocalFileStat) and st.size == 5
        assert fs.isdir("d/e") and fs.exists("d/a.txt")
    with pfio.v2.open_url(str(tmp_path / "d" / "a.txt")) as f:
        assert f.read() == "hello"


def test_local_module_level_filesystem(tmp_path):
    path = str(tmp_path / "m.bin")
    with pfio.v2.local.open(path, "wb") as f:
        f.write(b"\x00\x01")
    assert pfio.v2.local.stat(path).size == 2


def test_path_on_local(tmp_path):
    root = pfio.v2.pathlib.Path(fs=pfio.v2.from_url(str(tmp_path)))
    (root / "x" / "y.txt").parent.mkdir(parents=True)
    (root / "x" / "y.txt").write_text("p")
    assert [p.name for p in root.rglob("*.txt")] == ["y.txt"]
    pfio.v2.pathlib.unlink(root / "x")
    assert not (root / "x").exists()


# -- zip -------------------------------------------------------------------------------------

def test_zip_on_local(tmp_path):
    path = str(tmp_path / "t.zip")
    with pfio.testing.ZipForTest(path, {"a.txt": b"A", "d": {"b.bin": b"BB"}}):
        with pfio.v2.from_url(path) as fs:
            assert isinstance(fs, pfio.v2.Zip)
            assert sorted(fs.list(recursive=True)) == ["a.txt", "d/b.bin"]
            with fs.open("a.txt") as f:
                assert f.read() == "A"
            st = fs.stat("d/b.bin")
            assert isinstance(st, pfio.v2.ZipFileStat) and st.size == 2


def test_zip_forced_on_a_name_without_zip_suffix(tmp_path):
    (tmp_path / "archive.bin").write_bytes(_zip_bytes({"m": b"member"}))
    with pfio.v2.from_url(str(tmp_path / "archive.bin"), force_type="zip") as fs:
        with fs.open("m", "rb") as f:
            assert f.read() == b"member"


def test_missing_zip_member_is_a_key_error_too(tmp_path):
    (tmp_path / "t.zip").write_bytes(_zip_bytes({"m": b""}))
    with pfio.v2.from_url(str(tmp_path / "t.zip")) as fs:
        with pytest.raises(KeyError):
            fs.open("nope", "rb")


# -- S3 on the moto server -------------------------------------------------------------------

def test_s3_files(s3_env, s3_bucket):
    with pfio.v2.from_url(f"s3://{s3_bucket}/base") as fs:
        assert isinstance(fs, pfio.v2.S3)
        with fs.open("d/a.txt", "w") as f:
            f.write("hello")
        with fs.open("d/a.txt") as f:
            assert f.read() == "hello"
        assert sorted(fs.list()) == ["d/"]
        assert sorted(fs.list("d", recursive=True)) == ["a.txt"]
        assert isinstance(fs.stat("d/a.txt"), pfio.v2.s3.S3ObjectStat)
        assert isinstance(fs.stat("d"), pfio.v2.s3.S3PrefixStat) and fs.stat("d").isdir()
        [st] = fs.list("d", detail=True)
        assert isinstance(st, pfio.v2.s3.S3ObjectStat) and st.size == 5
        fs.remove("d/a.txt")
        assert not fs.exists("d/a.txt")
    with pfio.v2.open_url(f"s3://{s3_bucket}/base/u.bin", "wb") as f:
        f.write(b"u")
    with pfio.v2.open_url(f"s3://{s3_bucket}/base/u.bin", "rb") as f:
        assert f.read() == b"u"


def test_s3_class_as_pfio2_builds_it(s3_env, s3_bucket):
    fs = pfio.v2.S3(bucket=s3_bucket, prefix=None, create_bucket=False)
    with fs.open("top.txt", "wb") as f:
        f.write(b"t")
    assert fs.exists("top.txt") and "top.txt" in list(fs.list())


def test_zip_on_s3(s3_env, s3_bucket):
    with pfio.v2.from_url(f"s3://{s3_bucket}") as fs:
        with fs.open("t.zip", "wb") as f:
            f.write(_zip_bytes({"a.txt": b"A" * 10, "d/b": b"B"}))
    with pfio.v2.from_url(f"s3://{s3_bucket}/t.zip") as zfs:
        assert sorted(zfs.list(recursive=True)) == ["a.txt", "d/b"]
        with zfs.open("a.txt", "rb") as f:
            assert f.read() == b"A" * 10


def test_path_on_s3(s3_env, s3_bucket):
    root = pfio.v2.Path(fs=pfio.v2.from_url(f"s3://{s3_bucket}/p"))
    (root / "k.txt").write_text("v")
    assert (root / "k.txt").read_text() == "v" and (root / "k.txt").is_file()


# -- caches ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["NaiveCache", "FileCache", "MultiprocessFileCache"])
def test_caches_fill_from_s3(s3_env, s3_bucket, tmp_path, name):
    fs = pfio.v2.from_url(f"s3://{s3_bucket}")
    for i in range(3):
        with fs.open(f"{i}.bin", "wb") as f:
            f.write(bytes([i]) * 4)
    options = {} if name == "NaiveCache" else {"dir": str(tmp_path)}
    with getattr(pfio.cache, name)(3, do_pickle=True, **options) as cache:
        def load(i):
            with fs.open(f"{i}.bin", "rb") as f:
                return f.read()

        assert [cache.get_and_cache(i, load) for i in range(3)] == \
            [bytes([i]) * 4 for i in range(3)]
        fs.remove("0.bin")
        assert cache.get(0) == b"\x00" * 4


def test_http_cached_fs_over_s3(s3_env, s3_bucket):
    with pfio.testing.make_http_server() as (_, port):
        fs = pfio.v2.from_url(f"s3://{s3_bucket}", http_cache=f"http://127.0.0.1:{port}/c/")
        with fs.open("h.bin", "wb") as f:
            f.write(b"cached")
        with fs.open("h.bin", "rb") as f:
            assert f.read() == b"cached"
        assert list(pfio.testing.OnMemoryHTTPServerForTest.files.values()) == [b"cached"]


# -- S3 under moto's mock_aws (in-process) ---------------------------------------------------

_MOCK_BUCKET = "pfio2-mock-aws"


@pytest.fixture
def mock_s3(monkeypatch):
    moto = pytest.importorskip("moto")
    boto3 = pytest.importorskip("boto3")
    for var in ("S3_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "mock-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "mock-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with moto.mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=_MOCK_BUCKET)
        yield f"s3://{_MOCK_BUCKET}"


def test_mock_aws_write_read_list(mock_s3):
    with pfio.v2.from_url(f"{mock_s3}/base") as fs:
        with fs.open("d/a.bin", "wb") as f:
            f.write(b"mocked")
        with fs.open("d/a.bin", "rb") as f:
            assert f.read() == b"mocked"
        assert sorted(fs.list("d")) == ["a.bin"]
        assert fs.stat("d/a.bin").size == 6


def test_mock_aws_zip_members(mock_s3):
    with pfio.v2.from_url(mock_s3) as fs:
        with fs.open("t.zip", "wb") as f:
            f.write(_zip_bytes({"a.txt": b"A", "d/b": b"B" * 100}))
    with pfio.v2.from_url(f"{mock_s3}/t.zip") as zfs:
        assert sorted(zfs.list(recursive=True)) == ["a.txt", "d/b"]
        with zfs.open("d/b", "rb") as f:
            assert f.read() == b"B" * 100
