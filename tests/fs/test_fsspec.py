"""The fsspec backend (:mod:`pfio.fs.fsspec`): pfio's API over any installed fsspec
implementation, and the fallback of ``from_url`` for the schemes pfio has no backend for."""

import pytest

import pfio
import pfio.integrations.fsspec
from pfio.fs.fsspec import FsspecFS


def test_the_integration_re_exports_the_backend():
    assert pfio.integrations.fsspec.FsspecFS is FsspecFS


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
