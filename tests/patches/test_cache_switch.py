"""``patch_all(cache=True)``: files that patches stream are read through the object cache."""

import os

import pfio
from pfio import trace
from pfio.patches import locate, patch_all


def _gets(fn):
    """The S3 GETs that ``fn()`` sends."""
    trace.enable()
    try:
        fn()
        stats = trace.metrics().requests.get(("s3", "GET"))
    finally:
        trace.disable()
    return 0 if stats is None else stats.count


def test_open_reads_through_the_cache_when_it_is_on(s3_env, s3_bucket, object_cache):
    url = f"s3://{s3_bucket}/notes.txt"
    with pfio.from_url(f"s3://{s3_bucket}") as fs, fs.open("notes.txt", "w") as f:
        f.write("héllo\nworld\n")
    patch_all("builtins", cache=True)

    def read_text():
        with open(url, encoding="utf-8") as f:
            assert f.readlines() == ["héllo\n", "world\n"]

    assert _gets(read_text) == 1
    assert _gets(read_text) == 0
    with open(url, "rb") as f:
        assert f.read() == "héllo\nworld\n".encode()


def test_without_the_cache_every_open_reads_the_source(s3_env, s3_bucket):
    with pfio.from_url(f"s3://{s3_bucket}") as fs, fs.open("a.bin", "wb") as f:
        f.write(b"a")
    patch_all("builtins")

    def read():
        with open(f"s3://{s3_bucket}/a.bin", "rb") as f:
            assert f.read() == b"a"

    assert _gets(read) == 1 and _gets(read) == 1


def test_the_switch_reaches_child_processes_and_patched_puts_it_back():
    with pfio.patched("builtins", cache=True):
        assert locate.cache_on() and os.environ[locate.CACHE_ENV_VAR] == "1"
    assert not locate.cache_on() and locate.CACHE_ENV_VAR not in os.environ
