import fsspec
import pandas as pd
import pytest

import pfio
from pfio.integrations.fsspec import PfioFileSystem, pfio_url


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
