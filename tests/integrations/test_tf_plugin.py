"""pfio's TensorFlow filesystem plugin: ``tf.io.gfile`` on pfio URLs (``mem://``, local files
and S3 through ``pfio://``, and ``s3://`` itself), errors as TensorFlow's."""

import gc
import os
import secrets
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

import pfio  # noqa: E402
from pfio.integrations.fsspec import pfio_url  # noqa: E402
from pfio.integrations.tensorflow.plugin import bridge, register, registered_schemes  # noqa: E402
from pfio.integrations.tensorflow.plugin.build import BuildError, build, library_path  # noqa: E402

gfile = tf.io.gfile


@pytest.fixture(scope="module", autouse=True)
def plugin():
    return register()


@pytest.fixture(params=["mem", "file", "s3", "pfio-s3"])
def base(request, tmp_path):
    """A fresh, empty directory URL on each backend, spelt as TensorFlow users write it."""
    if request.param == "mem":
        return f"pfio://mem/tf-{secrets.token_hex(4)}"
    if request.param == "file":
        return f"pfio://file{tmp_path}"
    request.getfixturevalue("s3_env")
    bucket = request.getfixturevalue("s3_bucket")
    return f"s3://{bucket}/d" if request.param == "s3" else f"pfio://s3/{bucket}/d"


def pfio_of(url):
    """The pfio URL of a URL TensorFlow is given."""
    return pfio_url(url) if url.startswith("pfio://") else url


def put(url, data=b"x"):
    gfile.makedirs(url.rsplit("/", 1)[0])  # local files need their directory
    with gfile.GFile(url, "wb") as f:
        f.write(data)


def test_register_is_idempotent(plugin):
    assert register() == plugin
    assert os.path.exists(plugin)
    assert {"pfio", "s3", "hdfs"} <= set(registered_schemes())
    assert {"pfio", "s3", "hdfs"} <= set(gfile.get_registered_schemes())


def test_a_scheme_tensorflow_serves_itself_is_refused():
    with pytest.raises(ValueError, match="already has a filesystem for file://"):
        register(["file"])


def test_write_then_read(base):
    data = os.urandom(3 << 20)  # more than one read of TensorFlow's buffered reader
    put(f"{base}/a.bin", data)
    with gfile.GFile(f"{base}/a.bin", "rb") as f:
        assert f.read() == data
    assert pfio.open_url(pfio_of(f"{base}/a.bin"), "rb").read() == data


def test_reads_at_offsets(base):
    put(f"{base}/a.bin", bytes(range(256)) * 64)
    with gfile.GFile(f"{base}/a.bin", "rb") as f:
        f.seek(1000)
        assert f.read(4) == bytes([232, 233, 234, 235])
        f.seek(10)
        assert f.read(2) == bytes([10, 11])


def test_a_file_appears_only_when_closed(base):
    f = gfile.GFile(f"{base}/late.bin", "wb")
    f.write(b"1234")
    f.flush()
    assert not gfile.exists(f"{base}/late.bin")
    f.close()
    assert gfile.GFile(f"{base}/late.bin", "rb").read() == b"1234"


def test_a_writer_dropped_unclosed_publishes_nothing(base):
    def write_and_fail():
        f = gfile.GFile(f"{base}/half.bin", "wb")
        f.write(b"half of it")
        raise RuntimeError("the job died")

    with pytest.raises(RuntimeError):
        write_and_fail()
    gc.collect()
    assert not gfile.exists(f"{base}/half.bin")
    assert not pfio.from_url(pfio_of(base)).exists("half.bin")


def test_listdir(base):
    for name in ("d/x", "d/y", "d/sub/z"):
        put(f"{base}/{name}")
    assert sorted(gfile.listdir(f"{base}/d")) == ["sub", "x", "y"]


def test_glob_spells_matches_as_the_pattern(base):
    for name in ("g/a.rec", "g/b.rec", "g/c.txt", "g/sub/d.rec"):
        put(f"{base}/{name}")
    assert gfile.glob(f"{base}/g/*.rec") == [f"{base}/g/a.rec", f"{base}/g/b.rec"]
    assert gfile.glob(f"{base}/g/*/*.rec") == [f"{base}/g/sub/d.rec"]
    assert gfile.glob(f"{base}/g/c.txt") == [f"{base}/g/c.txt"]
    assert gfile.glob(f"{base}/g/none*") == []


def test_exists_and_isdir(base):
    put(f"{base}/e/f")
    assert gfile.exists(f"{base}/e/f")
    assert gfile.exists(f"{base}/e")
    assert not gfile.exists(f"{base}/e/missing")
    assert gfile.isdir(f"{base}/e")
    assert not gfile.isdir(f"{base}/e/f")
    assert not gfile.isdir(f"{base}/e/missing")


def test_stat(base):
    put(f"{base}/s.bin", b"x" * 1234)
    st = gfile.stat(f"{base}/s.bin")
    assert st.length == 1234
    assert not st.is_directory
    assert st.mtime_nsec > 0


def test_stat_of_a_directory(base):
    put(f"{base}/dir/f")
    assert gfile.stat(f"{base}/dir").is_directory


def test_rename_replaces_the_target(base):
    put(f"{base}/r1", b"new")
    put(f"{base}/r2", b"old")
    gfile.rename(f"{base}/r1", f"{base}/r2", overwrite=True)
    assert not gfile.exists(f"{base}/r1")
    assert gfile.GFile(f"{base}/r2", "rb").read() == b"new"


def test_rename_refuses_an_existing_target_without_overwrite(base):
    put(f"{base}/r1")
    put(f"{base}/r2")
    with pytest.raises(tf.errors.AlreadyExistsError):
        gfile.rename(f"{base}/r1", f"{base}/r2")


def test_copy(base):
    put(f"{base}/c1", b"copied")
    gfile.copy(f"{base}/c1", f"{base}/c2")
    assert gfile.GFile(f"{base}/c2", "rb").read() == b"copied"
    assert gfile.exists(f"{base}/c1")


def test_remove(base):
    put(f"{base}/gone")
    gfile.remove(f"{base}/gone")
    assert not gfile.exists(f"{base}/gone")


def test_remove_refuses_a_directory(base):
    put(f"{base}/dir/f")
    with pytest.raises(tf.errors.FailedPreconditionError):
        gfile.remove(f"{base}/dir")
    assert gfile.exists(f"{base}/dir/f")


def test_rmtree(base):
    for name in ("t/a", "t/b/c", "t/b/d/e"):
        put(f"{base}/{name}")
    put(f"{base}/kept")
    gfile.rmtree(f"{base}/t")
    assert not gfile.exists(f"{base}/t")
    assert gfile.exists(f"{base}/kept")


def test_missing_files_are_not_found(base):
    with pytest.raises(tf.errors.NotFoundError):
        gfile.GFile(f"{base}/missing", "rb").read()
    with pytest.raises(tf.errors.NotFoundError):
        gfile.stat(f"{base}/missing")
    with pytest.raises(tf.errors.NotFoundError):
        gfile.remove(f"{base}/missing")
    with pytest.raises(tf.errors.NotFoundError):
        gfile.listdir(f"{base}/missing")


@pytest.mark.parametrize("backend", ["mem", "file"])
def test_makedirs_and_mkdir_create_directories(backend, tmp_path):
    base = f"pfio://mem/tf-{secrets.token_hex(4)}" if backend == "mem" else f"pfio://file{tmp_path}"
    gfile.makedirs(f"{base}/a/b/c")
    assert gfile.isdir(f"{base}/a/b/c")
    gfile.mkdir(f"{base}/a/other")
    assert sorted(gfile.listdir(f"{base}/a")) == ["b", "other"]
    with pytest.raises(tf.errors.NotFoundError):
        gfile.mkdir(f"{base}/missing/other")  # mkdir needs its parent


def test_makedirs_over_a_file_fails(tmp_path):
    put(f"pfio://file{tmp_path}/f")
    with pytest.raises(tf.errors.FailedPreconditionError):
        gfile.makedirs(f"pfio://file{tmp_path}/f")


def test_append_where_the_backend_appends(tmp_path):
    url = f"pfio://file{tmp_path}/log.txt"
    put(url, b"one,")
    with gfile.GFile(url, "a") as f:
        f.write("two")
    assert gfile.GFile(url, "rb").read() == b"one,two"


def test_s3_refuses_append(s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/log.txt"
    put(url, b"one,")
    with pytest.raises(tf.errors.UnimplementedError, match="cannot be opened in mode"):
        with gfile.GFile(url, "a") as f:
            f.write("two")
    assert gfile.GFile(url, "rb").read() == b"one,"


def test_s3_makedirs_makes_nothing_until_a_file_is_written(s3_env, s3_bucket):
    gfile.makedirs(f"s3://{s3_bucket}/new/dir")
    assert not gfile.isdir(f"s3://{s3_bucket}/new/dir")
    put(f"s3://{s3_bucket}/new/dir/f")
    assert gfile.isdir(f"s3://{s3_bucket}/new/dir")


def test_a_failed_upload_publishes_nothing(s3_env, s3_bucket, fault_proxy, monkeypatch):
    monkeypatch.setenv("S3_ENDPOINT", fault_proxy.endpoint)
    fault_proxy.fail_next(1, status=403, code="AccessDenied",
                          match=lambda request: request.method == "PUT")
    url = f"s3://{s3_bucket}/denied.bin"
    f = gfile.GFile(url, "wb")
    f.write(b"data")
    with pytest.raises(tf.errors.PermissionDeniedError):
        f.close()
    assert not gfile.exists(url)


def test_errors_name_the_url_without_secrets(s3_env, s3_bucket):
    with pytest.raises(tf.errors.NotFoundError) as caught:
        gfile.GFile(f"s3://{s3_bucket}/nothing-here", "rb").read()
    message = str(caught.value)
    assert f"{s3_bucket}/nothing-here" in message
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in message


def test_a_malformed_url_is_an_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="pfio://SCHEME"):
        gfile.exists("pfio://")


def test_concurrent_reads_of_one_file(s3_env, s3_bucket):
    """TensorFlow may read one file from several threads: each read gets its own bytes
    (the streaming reader for one, positional reads for the others)."""
    data = os.urandom(1 << 20)
    url = f"s3://{s3_bucket}/shared.bin"
    put(url, data)
    reader = bridge.open_reader(url)
    offsets = [(i * 7919) % (len(data) - 5000) for i in range(64)]

    def read(offset):
        buffer = bytearray(5000)
        assert bridge.read_into(reader, offset, buffer) == 5000
        return offset, bytes(buffer)

    try:
        with ThreadPoolExecutor(8) as pool:
            for offset, got in pool.map(read, offsets):
                assert got == data[offset:offset + 5000]
    finally:
        bridge.close_reader(reader)


def test_a_read_past_the_end_is_short(base):
    put(f"{base}/short.bin", b"12345")
    reader = bridge.open_reader(f"{base}/short.bin")
    buffer = bytearray(10)
    assert bridge.read_into(reader, 3, buffer) == 2
    assert bytes(buffer[:2]) == b"45"
    bridge.close_reader(reader)


def test_copy_and_rename_between_backends(s3_env, s3_bucket, tmp_path):
    put(f"pfio://s3/{s3_bucket}/src.bin", b"travels")
    gfile.copy(f"pfio://s3/{s3_bucket}/src.bin", f"pfio://file{tmp_path}/copy.bin")
    assert (tmp_path / "copy.bin").read_bytes() == b"travels"
    gfile.rename(f"pfio://file{tmp_path}/copy.bin", f"pfio://s3/{s3_bucket}/moved.bin")
    assert not (tmp_path / "copy.bin").exists()
    assert pfio.open_url(f"s3://{s3_bucket}/moved.bin", "rb").read() == b"travels"


def test_the_library_is_kept_per_tensorflow_and_python(plugin):
    key = os.path.basename(os.path.dirname(plugin))
    assert key.startswith(f"tf{tf.__version__}-py{sys.version_info.major}{sys.version_info.minor}-")
    assert library_path() == Path(plugin)


def test_building_without_a_compiler_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CXX", "no-such-compiler")
    with pytest.raises(BuildError, match=r"apt-get install g\+\+"):
        build()
    assert not any(tmp_path.rglob("*.so"))
