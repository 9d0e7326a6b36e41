"""PfioWriter(prefix_strategy=...): data files spread over key prefixes inside the
checkpoint, read back by PfioReader without options (local disk and S3)."""

import posixpath
import re

import pytest
import torch
import torch.distributed.checkpoint as dcp

import pfio
from pfio.integrations.torch.dcp import HashedPrefixes, PfioReader, PfioWriter, RoundRobinPrefixes


@pytest.fixture(params=["local", "s3"])
def url(request, tmp_path):
    if request.param == "local":
        return str(tmp_path / "ckpt")
    request.getfixturevalue("s3_env")
    return f"s3://{request.getfixturevalue('s3_bucket')}/run/ckpt"


def _state():
    return {f"w{i}": torch.full((1000,), float(i)) for i in range(8)}


def _round_trip(url, strategy):
    dcp.save(_state(), storage_writer=PfioWriter(url, thread_count=4,
                                                 prefix_strategy=strategy), no_dist=True)
    loaded = {k: torch.zeros_like(v) for k, v in _state().items()}
    dcp.load(loaded, storage_reader=PfioReader(url), no_dist=True)
    assert all(torch.equal(loaded[k], v) for k, v in _state().items())
    with pfio.from_url(url) as fs:
        return sorted(n for n in fs.list(recursive=True) if n.endswith(".distcp"))


def test_round_robin_puts_each_file_under_the_next_prefix(url):
    files = _round_trip(url, RoundRobinPrefixes(["p0", "p1", "p2", "p3"]))
    assert [posixpath.dirname(f) for f in files] == ["p0", "p1", "p2", "p3"]


def test_round_robin_by_name_uses_16_hex_prefixes(url):
    files = _round_trip(url, "round-robin")
    assert [posixpath.dirname(f) for f in files] == ["0", "1", "2", "3"]


def test_hashed_prefixes_are_hex_digits_of_the_name(url):
    files = _round_trip(url, HashedPrefixes(3))
    assert len(files) == 4
    assert all(re.fullmatch(r"[0-9a-f]{3}/__0_[0-9a-f]+_\d\.distcp", f) for f in files)
    assert _round_trip(url, "hashed")  # overwrite: the old files are removed
    with pfio.from_url(url) as fs:
        names = [n for n in fs.list(recursive=True) if n.endswith(".distcp")]
    assert all(re.fullmatch(r"[0-9a-f]{2}/.*", n) for n in names) and len(names) == 4


def test_bad_strategies_raise():
    with pytest.raises(ValueError, match="unknown prefix strategy"):
        PfioWriter("mem://x/y", prefix_strategy="binary")
    with pytest.raises(ValueError, match="relative names"):
        RoundRobinPrefixes(["a", "../b"])
    with pytest.raises(ValueError, match="digits"):
        HashedPrefixes(0)
