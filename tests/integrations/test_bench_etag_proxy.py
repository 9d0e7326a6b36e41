"""The checkpoint benchmark's ETag proxy, run in a process of its own
(``benchmarks/etag_proxy.py``: its CPU and GIL are no measured client's)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.request import urlopen

from pfio import from_url

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from etag_proxy import ETagProxyProcess  # noqa: E402 - a script's module, beside it


def test_the_proxy_process_relays_requests_and_counts_them(s3_env, s3_bucket):
    with ETagProxyProcess(s3_env) as proxy:
        with from_url(f"s3://{s3_bucket}", endpoint=proxy.endpoint) as fs:
            with fs.open("a", "wb") as f:
                f.write(b"relayed")
            with fs.open("a", "rb") as f:
                assert f.read() == b"relayed"
        counts = json.loads(urlopen(f"{proxy.endpoint}/-/counts").read())
        assert counts["PUT"] == 1 and counts["GET"] >= 1
    assert proxy._process.returncode == 0  # it stopped with its input

