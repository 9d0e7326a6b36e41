"""Threads that use pfio for the first time at once each get a whole filesystem.

A backend or container module is imported on first use (:mod:`pfio.registry`); while one
thread imports it, it sits half initialised in ``sys.modules``, and another thread that took
it from there crashed with ``AttributeError: partially initialized module``. Each run is a
fresh interpreter (nothing imported yet), started several times to make the race likely.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

THREADS = 8
RUNS = 5

#: run in a fresh interpreter with the zip's path and the number of threads as arguments;
#: prints one JSON line
SCRIPT = r"""
import json, socket, sys, threading

connects = []
_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def connect(self, address):
    connects.append(repr(address))
    return _connect(self, address)


def connect_ex(self, address):
    connects.append(repr(address))
    return _connect_ex(self, address)


socket.socket.connect, socket.socket.connect_ex = connect, connect_ex

import pfio

THREADS = int(sys.argv[2])
LAZY = ("pfio.fs.local", "pfio.fs.memory", "pfio.fs.s3", "pfio.containers.zip")
imported = [m for m in LAZY if m in sys.modules]
URLS = ["mem://first-use/dir", "s3://bucket/prefix", sys.argv[1], sys.argv[1] + "/d"]
barrier = threading.Barrier(THREADS)
results = [None] * THREADS


def use(i):
    barrier.wait()
    url = URLS[i % len(URLS)]
    options = {"endpoint": "http://127.0.0.1:1"} if url.startswith("s3:") else {}
    try:
        fs = pfio.from_url(url, **options)
        results[i] = type(fs).__name__
        fs.close()
    except BaseException as e:
        results[i] = "error: " + repr(e)


threads = [threading.Thread(target=use, args=(i,)) for i in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"imported": imported, "results": results, "connects": connects}))
"""


@pytest.fixture
def archive(tmp_path: Path) -> str:
    """A local zip holding ``d/x``."""
    path = tmp_path / "first-use.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("d/x", b"x")
    return str(path)


def _run_fresh(archive: str, tmp_path: Path) -> dict:
    """The script's report, from a fresh interpreter that has no AWS settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3_", "PFIO_"))}
    env.update(PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
               AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
               AWS_EC2_METADATA_DISABLED="true")
    done = subprocess.run([sys.executable, "-c", SCRIPT, archive, str(THREADS)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_threads_using_schemes_and_containers_first_at_once_all_succeed(archive, tmp_path):
    expected = ["MemoryFS", "S3", "Zip", "Zip"] * (THREADS // 4)
    for _ in range(RUNS):
        report = _run_fresh(archive, tmp_path)
        assert report["imported"] == []  # nothing was imported before the threads met
        assert report["results"] == expected


def test_constructing_an_s3_filesystem_sends_no_request(archive, tmp_path):
    report = _run_fresh(archive, tmp_path)
    assert "S3" in report["results"]
    assert report["connects"] == []


# -- the README's Dask example, on a worker whose threads start at once -----------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def dask_example(monkeypatch):
    """examples/dask_parquet.py as a module (importable by the workers, which get this
    process's ``sys.path``)."""
    pytest.importorskip("dask.distributed")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import importlib

    return importlib.import_module("dask_parquet")


def test_dask_example_on_one_worker_with_two_threads(dask_example, s3_env, s3_bucket,
                                                     capsys):
    """A fresh worker process runs two partitions at once: both threads use pfio (S3 and
    the Parquet writer) for the first time together."""
    dask_example.main(f"s3://{s3_bucket}/train", n_workers=1, threads_per_worker=2,
                      processes=True)
    assert capsys.readouterr().out.split("\n")[:3] == ["4 files", "(32, 4)", "100 450"]
