import fsspec
import pandas as pd
import pytest

import pfio
from pfio.integrations.fsspec import FsspecFS, PfioFileSystem, pfio_url


def test_pfio_paths_map_to_pfio_urls():
    assert pfio_url("pfio://s3/bucket/key") == "s3://bucket/key"
    assert pfio_url("pfio://file/tmp/x") == "/tmp/x"
    with pytest.raises(ValueError, match="pfio://SCHEME"):
        pfio_url("pfio://")


def test_pandas_reads_and_writes_through_pfio(request):
    url = f"pfio://mem/fsspec-{request.node.name}/table.csv"
    pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_csv(url, index=False)
    assert pfio.open_url(pfio_url(url)).read().startswith("a,b")
    assert pd.read_csv(url)["b"].tolist() == ["x", "y"]


def test_pandas_parquet_through_pfio(request):
    url = f"pfio://mem/fsspec-{request.node.name}/t.parquet"
    pd.DataFrame({"v": [1.5, 2.5]}).to_parquet(url)
    assert pd.read_parquet(url)["v"].tolist() == [1.5, 2.5]


def test_fsspec_listing_and_info(request):
    base = f"mem://fsspec-{request.node.name}"
    fs = pfio.from_url(base)
    with fs.open("d/f.bin", "wb") as f:
        f.write(b"1234")
    bridge = fsspec.filesystem("pfio")
    assert isinstance(bridge, PfioFileSystem)
    assert bridge.ls(f"pfio://mem/fsspec-{request.node.name}/d", detail=False) == [
        f"mem/fsspec-{request.node.name}/d/f.bin"]
    assert bridge.info(f"pfio://mem/fsspec-{request.node.name}/d/f.bin")["size"] == 4


def test_pfio_over_fsspec_memory_filesystem(request):
    fs = FsspecFS("memory", f"/bridge-{request.node.name}")
    with fs.open("x/y.txt", "w") as f:
        f.write("through fsspec")
    assert fs.open("x/y.txt", "r").read() == "through fsspec"
    assert list(fs.list()) == ["x/"]
    assert fs.stat("x/y.txt").size == 14
    with pytest.raises(FileNotFoundError):
        fs.open("missing")


def test_fsspec_write_error_publishes_nothing(request):
    fs = FsspecFS("memory", f"/bridge-{request.node.name}")
    with pytest.raises(RuntimeError), fs.open("half.txt", "w") as f:
        f.write("half")
        raise RuntimeError
    assert not fs.exists("half.txt")


def test_from_url_falls_back_to_fsspec_for_its_schemes(request):
    fs = pfio.from_url(f"memory://fallback-{request.node.name}/data")
    assert isinstance(fs, FsspecFS)
    with fs.open("a.txt", "w") as f:
        f.write("via fsspec")
    assert pfio.open_url(f"memory://fallback-{request.node.name}/data/a.txt").read() == \
        "via fsspec"


def test_scheme_unknown_to_fsspec_too_is_still_an_error():
    with pytest.raises(ValueError, match="unknown URL scheme 'nosuchproto'"):
        pfio.from_url("nosuchproto://x")
