"""Shared pieces of the benchmarks: timing, result tables, and baselines run in their own
virtualenvs (PFIO 2.10 and pfio share the import name ``pfio``, so PFIO 2.10 runs in
``benchmarks/.venvs/pfio210`` as a subprocess).

Every benchmark script defines ``run(quick: bool) -> list[Row]`` and can be run alone
(``python benchmarks/bench_x.py``) or by ``benchmarks/run.py`` with the others.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
VENVS = HERE / ".venvs"

#: packages of each baseline virtualenv
BASELINES: dict[str, list[str]] = {
    "pfio210": ["pfio==2.10.0", "boto3", "numpy"],
    "pfio210-torch": ["pfio==2.10.0", "boto3", "numpy", "torch==2.13.0", "pillow"],
    "s3fs": ["s3fs", "boto3"],
    # the S3 clients that pfio's S3 engine is measured against (bench_s3, s3_clients)
    "boto3": ["boto3"],
    "obstore": ["obstore==0.12.1"],
    "s3torchconnectorclient": ["s3torchconnectorclient==1.5.0"],
    # the training-input readers pfio's datasets are measured against (bench_training_input)
    "s3torchconnector": ["s3torchconnector==1.5.0", "torch==2.13.0", "pillow", "numpy"],
    "webdataset": ["webdataset==1.0.2", "torch==2.13.0", "pillow", "numpy", "boto3"],
    "litdata": ["litdata==0.2.76", "torch==2.13.0", "pillow", "numpy", "boto3"],
    # petastorm 0.13.1 (its last release) reads through pyarrow's legacy dataset API, gone
    # after pyarrow 10, with the synchronous s3fs 0.4.2; it needs NumPy 1 and setuptools < 70
    "petastorm": ["petastorm==0.13.1", "pyarrow==10.0.1", "numpy==1.26.4", "pandas==2.0.3",
                  "s3fs==0.4.2", "botocore==1.44.5", "pyspark==4.3.0", "setuptools==65.5.0"],
}


@dataclass
class Row:
    """One line of a result table: a figure, its baseline and their ratio against a target.

    ``higher_is_better`` says which way the ratio must go: for a rate (items/s) the ratio
    is ours / baseline and must be >= ``target``; for a cost (seconds) it is ours / baseline
    and must be <= ``target``. A row without a target is for information.
    """

    benchmark: str
    metric: str
    ours: float
    baseline_name: str
    baseline: float
    target: float | None
    higher_is_better: bool = True
    unit: str = ""

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else float("inf")

    @property
    def ok(self) -> bool | None:
        if self.target is None:
            return None
        return self.ratio >= self.target if self.higher_is_better else self.ratio <= self.target

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "ratio": self.ratio, "ok": self.ok}


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """The shortest wall time of ``repeat`` calls of ``fn``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def best_cpu_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """The shortest CPU time (user + system, this process) of ``repeat`` calls of ``fn``, in
    seconds: unlike wall time it does not count the time other processes of a busy machine
    hold the CPU (for single-threaded, CPU-bound work)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def format_table(rows: list[Row]) -> str:
    """Render rows as a Markdown table."""
    lines = [
        "| benchmark | metric | pfio | baseline | baseline value | ratio | target | ok |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    for r in rows:
        sign = ">=" if r.higher_is_better else "<="
        target = "info" if r.target is None else f"{sign} {r.target}x"
        ok = "" if r.ok is None else "yes" if r.ok else "NO"
        lines.append(
            f"| {r.benchmark} | {r.metric} | {r.ours:,.3g} {r.unit} | {r.baseline_name} | "
            f"{r.baseline:,.3g} {r.unit} | {r.ratio:.2f}x | {target} | {ok} |"
        )
    return "\n".join(lines)


def baseline_python(name: str) -> Path:
    """The interpreter of baseline virtualenv ``name``, created on first use."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    wanted = "\n".join(BASELINES[name])
    if not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *BASELINES[name]], check=True)
        stamp.write_text(wanted)
    return python


def _without_pythonpath(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """``environ`` without ``PYTHONPATH``: a baseline imports the packages of its own
    virtualenv (PFIO 2.10's ``pfio``), never this checkout's."""
    return {k: v for k, v in environ.items() if k != "PYTHONPATH"}


def run_in_baseline(name: str, code: str, env: dict[str, str] | None = None,
                    timeout: float = 600) -> dict:
    """Run ``code`` with baseline ``name``'s interpreter; the code prints one JSON object
    on its last line of output, which is returned."""
    return run_script(baseline_python(name), code, env, timeout, label=f"baseline {name}")


def run_script(python: Path, code: str, env: dict[str, str] | None = None,
               timeout: float = 600, keep_pythonpath: bool = False,
               label: str = "script") -> dict:
    """Run ``code`` with interpreter ``python`` in a process of its own (``PYTHONPATH``
    removed unless ``keep_pythonpath``; ``env`` added); the code prints one JSON object on
    its last line of output, which is returned."""
    environ = dict(os.environ) if keep_pythonpath else _without_pythonpath(os.environ)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(textwrap.dedent(code))
    try:
        out = subprocess.run(
            [str(python), script.name], check=True, capture_output=True, text=True,
            env={**environ, **(env or {})}, timeout=timeout, cwd=tempfile.gettempdir(),
        )
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"{label} failed:\n{exc.stderr}") from exc
    finally:
        os.unlink(script.name)
    return json.loads(out.stdout.strip().splitlines()[-1])


def ceph_endpoint() -> tuple[str, dict[str, str]] | None:
    """The endpoint and credentials of a Ceph RADOS Gateway started by
    ``scripts/ceph-rgw.sh start`` (``PFIO_TEST_CEPH_*`` in the environment, as
    ``scripts/with-ceph.sh`` exports them, else the file ``PFIO_CEPH_ENV``), if one answers."""
    settings = {k: v for k, v in os.environ.items() if k.startswith("PFIO_TEST_CEPH_")}
    path = Path(os.environ.get("PFIO_CEPH_ENV", "/tmp/pfio-ceph/env"))
    if not settings and path.exists():
        settings = dict(line.strip().split("=", 1) for line in path.read_text().splitlines()
                        if "=" in line)
    if "PFIO_TEST_CEPH_ENDPOINT" not in settings:
        return None
    endpoint = settings["PFIO_TEST_CEPH_ENDPOINT"]
    host = urlsplit(endpoint)
    try:
        socket.create_connection((host.hostname, host.port), timeout=5).close()
    except OSError as e:
        print(f"no Ceph RADOS Gateway answers at {endpoint} ({e}): its rows are left out",
              file=sys.stderr)
        return None
    return endpoint, {
        "AWS_ACCESS_KEY_ID": settings["PFIO_TEST_CEPH_ACCESS_KEY"],
        "AWS_SECRET_ACCESS_KEY": settings["PFIO_TEST_CEPH_SECRET_KEY"],
        "AWS_DEFAULT_REGION": "us-east-1"}


@contextlib.contextmanager
def s3_server(prefix: str = "bench") -> Iterator[tuple[str, str, dict[str, str]]]:
    """The S3 server of a benchmark: the Ceph RADOS Gateway of :func:`ceph_endpoint` where one
    runs, else a moto server in a process of its own. Yields the server's name, a new
    bucket's name (``prefix-<random>``) and the settings (credentials, region,
    ``S3_ENDPOINT``), which are also put in this process's environment (and taken out
    afterwards). The bucket and its objects are deleted at the end: a gateway keeps them."""
    import pfio

    bucket = f"{prefix}-{secrets.token_hex(4)}"
    saved = dict(os.environ)
    ceph = ceph_endpoint()
    with contextlib.ExitStack() as stack:
        if ceph is not None:
            endpoint, credentials = ceph
            name = "Ceph RGW"
        else:
            from pfio.testing.s3server import MotoServer

            server = stack.enter_context(MotoServer(separate_process=True))
            endpoint, name = server.endpoint, "moto server"
            credentials = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                           "AWS_DEFAULT_REGION": "us-east-1"}
        settings = {**credentials, "S3_ENDPOINT": endpoint}
        os.environ.update(settings)
        pfio.from_url(f"s3://{bucket}", create_bucket=True).close()
        try:
            yield name, bucket, settings
        finally:
            if ceph is not None:
                _drop_bucket(bucket, endpoint, credentials)
            os.environ.clear()
            os.environ.update(saved)


def _drop_bucket(bucket: str, endpoint: str, credentials: dict[str, str]) -> None:
    """Delete ``bucket`` and its objects."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint,
                          region_name=credentials["AWS_DEFAULT_REGION"],
                          aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"])
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
        if keys:
            client.delete_objects(Bucket=bucket, Delete={"Objects": keys})
    client.delete_bucket(Bucket=bucket)
    client.close()


def main(run: Callable[[bool], list[Row]]) -> None:
    """Entry point of a single benchmark script: ``--quick`` for a small run."""
    quick = "--quick" in sys.argv
    rows = run(quick)
    print(format_table(rows))
