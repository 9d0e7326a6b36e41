"""A URL with a presigned query string (served through fsspec) shows no signature or
credential in the filesystem's repr, its errors, its files' names or a trace."""

from __future__ import annotations

import json

import pytest

import pfio
from pfio import trace

SECRETS = ("SIGabc123", "CREDkey456", "TOKENxyz789")
URL = ("memory://presigned/obj.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256"
       "&X-Amz-Credential=CREDkey456&X-Amz-Security-Token=TOKENxyz789"
       "&X-Amz-Signature=SIGabc123")


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_repr_of_the_filesystem():
    assert_clean(repr(pfio.from_url(URL)))


def test_errors_name_the_url_without_its_query():
    with pytest.raises(FileNotFoundError) as info:
        pfio.open_url(URL, "rb")
    assert_clean(str(info.value))
    assert "memory://presigned/obj.bin" in str(info.value)


def test_writer_and_stat_names():
    with pfio.open_url(URL, "wb") as f:
        assert_clean(repr(f))
        assert "memory://presigned/obj.bin?" in repr(f)
        f.write(b"data")
    fs = pfio.from_url(URL.rsplit("/", 1)[0])
    name = URL.rsplit("/", 1)[1]
    assert fs.open(name, "rb").read() == b"data"
    assert_clean(repr(fs.stat(name)))


def test_exported_trace(tmp_path):
    trace.enable()
    try:
        with pfio.open_url(URL, "wb") as f:
            f.write(b"data")
        with pfio.open_url(URL, "rb") as f:
            f.read()
        trace.export_chrome_trace(tmp_path / "t.json")
    finally:
        trace.disable()
    text = (tmp_path / "t.json").read_text()
    json.loads(text)
    assert_clean(text)
