"""Checkpoints on S3 (issue 35): pfio against s3torchconnector 1.5 (s3tc), boto3 and local
disk, on the Ceph RADOS Gateway where one runs (else a moto server).

* DCP save and load (``torch.distributed.checkpoint``, one process) with ``thread_count`` 1
  and 4: pfio's ``PfioWriter``/``PfioReader`` against s3tc's ``S3StorageWriter``/
  ``S3StorageReader`` and DCP's own ``FileSystemWriter``/``Reader`` on local disk;
* single-file save and load (``torch.save``/``torch.load`` of the whole state):
  ``pfio.integrations.checkpoints.save``/``load`` against s3tc's ``S3Checkpoint``, boto3
  (``upload_fileobj``/``get_object`` through memory) and local disk.

The state is a model and its optimizer (tensors of 64 KiB to 4 MiB; ``SIZE_MIB`` in all,
or ``PFIO_BENCH_CHECKPOINT_MIB``: a small state measures set-up more than transfer),
every load checked tensor by tensor. Clients take turns for ``ROUNDS`` rounds; each figure
is the median over the rounds (GB/s of state), with the spread (min-max) printed, and the
client CPU time (user + system of this process, native threads included) per GiB.

s3tc 1.5 cannot finish a multipart upload on Ceph 16: its CRT client wants an ``ETag``
header on CompleteMultipartUpload's answer, which Ceph gives only in the XML body. Its saves
go through :class:`ETagProxy`, a small loopback proxy that adds the header; pfio saves
through the same proxy too (the ``via proxy`` rows), a control for what the proxy costs.
The targets compare like with like: s3tc's saves with pfio's through the proxy.
"""

from __future__ import annotations

import http.client
import http.server
import io
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from urllib.parse import urlsplit

import torch
import torch.distributed.checkpoint as dcp
from harness import Row, main, s3_server

from pfio import from_url
from pfio.integrations.dcp import PfioReader, PfioWriter

MIB = 1 << 20
SIZE_MIB = int(os.environ.get("PFIO_BENCH_CHECKPOINT_MIB", "64"))
ROUNDS = 3
REGION = "us-east-1"
#: pfio's S3 options here: a read timeout as long as the other clients' (a gateway shared
#: by a busy machine can be silent for more than pfio's default 10 s)
OPTIONS = {"read_timeout": 60}


def make_state(size_mib: int) -> dict[str, torch.Tensor]:
    """A model (weights of 64 KiB to 4 MiB) and Adam-like optimizer state of ``size_mib``."""
    state: dict[str, torch.Tensor] = {}
    sizes = [64 << 10, 256 << 10, 1 << 20, 4 << 20]
    total, i = 0, 0
    while total < size_mib * MIB:
        n = sizes[i % len(sizes)] // 4
        weight = torch.randn(n)
        state[f"model.layer{i}.weight"] = weight
        state[f"optim.layer{i}.exp_avg"] = torch.randn(n)
        total += 2 * weight.numel() * 4
        i += 1
    return state


def _check(loaded: dict[str, torch.Tensor], state: dict[str, torch.Tensor]) -> None:
    for key, value in state.items():
        if not torch.equal(loaded[key], value):
            raise AssertionError(f"{key} differs after the load")


# -- the ETag proxy ----------------------------------------------------------------------------

class ETagProxy:
    """A loopback HTTP/1.1 proxy to ``upstream`` that adds an ``ETag`` header to the answer
    of CompleteMultipartUpload (from its XML body). The ``Host`` header is relayed as sent:
    the signature covers it."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        host, port = parts.hostname, parts.port

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _relay(self) -> None:
                if not hasattr(self, "up"):
                    self.up = http.client.HTTPConnection(host, port, timeout=120)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("expect", "connection")}
                self.up.putrequest(self.command, self.path, skip_host=True,
                                   skip_accept_encoding=True)
                for k, v in headers.items():
                    self.up.putheader(k, v)
                self.up.endheaders(body)
                answer = self.up.getresponse()
                data = answer.read()
                self.send_response_only(answer.status, answer.reason)
                names = set()
                for k, v in answer.getheaders():
                    if k.lower() in ("transfer-encoding", "content-length", "connection"):
                        continue
                    names.add(k.lower())
                    self.send_header(k, v)
                if self.command == "POST" and "uploadId=" in self.path and \
                        "etag" not in names:
                    found = re.search(rb"<ETag>(.*?)</ETag>", data)
                    if found:
                        self.send_header("ETag", found.group(1).decode().replace("&quot;",
                                                                                 '"'))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ETagProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- the clients -------------------------------------------------------------------------------

Op = Callable[[], None]


def _s3tc_client(endpoint: str):
    from s3torchconnector import S3ClientConfig
    from s3torchconnector._s3client import S3Client

    return S3Client(REGION, endpoint=endpoint,
                    s3client_config=S3ClientConfig(force_path_style=True))


def dcp_clients(state, template, bucket: str, endpoint: str, proxy: str, tmp: str,
                threads: int) -> dict[str, tuple[Op, Op]]:
    """name -> (save, load) of the DCP clients with ``threads`` writer threads."""
    from s3torchconnector.dcp import S3StorageReader, S3StorageWriter

    def pfio_ops(key: str, options: dict | None) -> tuple[Op, Op]:
        url = f"s3://{bucket}/{key}"

        def save() -> None:
            dcp.save(state, storage_writer=PfioWriter(url, thread_count=threads,
                                                      storage_options=options), no_dist=True)

        def load() -> None:
            loaded = {k: torch.empty_like(v) for k, v in template.items()}
            dcp.load(loaded, storage_reader=PfioReader(url, storage_options=options),
                     no_dist=True)
            _check(loaded, state)
        return save, load

    def s3tc_save() -> None:
        writer = S3StorageWriter(REGION, f"s3://{bucket}/s3tc-dcp{threads}",
                                 thread_count=threads)
        writer.fs._client = _s3tc_client(proxy)
        dcp.save(state, storage_writer=writer, no_dist=True)

    def s3tc_load() -> None:
        reader = S3StorageReader(REGION, f"s3://{bucket}/s3tc-dcp{threads}")
        reader.fs._client = _s3tc_client(endpoint)
        loaded = {k: torch.empty_like(v) for k, v in template.items()}
        dcp.load(loaded, storage_reader=reader, no_dist=True)
        _check(loaded, state)

    local = os.path.join(tmp, f"dcp{threads}")

    def local_save() -> None:
        dcp.save(state, storage_writer=dcp.FileSystemWriter(local, thread_count=threads),
                 no_dist=True)

    def local_load() -> None:
        loaded = {k: torch.empty_like(v) for k, v in template.items()}
        dcp.load(loaded, storage_reader=dcp.FileSystemReader(local), no_dist=True)
        _check(loaded, state)

    return {"pfio": pfio_ops(f"pfio-dcp{threads}", dict(OPTIONS)),
            "pfio via proxy": pfio_ops(f"pfio-proxy-dcp{threads}",
                                       {**OPTIONS, "endpoint": proxy}),
            "s3tc": (s3tc_save, s3tc_load),
            "local disk": (local_save, local_load)}


def single_file_clients(state, bucket: str, endpoint: str, proxy: str,
                        tmp: str) -> dict[str, tuple[Op, Op]]:
    """name -> (save, load) of the single-file clients."""
    import boto3
    from s3torchconnector import S3Checkpoint, S3ClientConfig

    def pfio_ops(url_endpoint: str | None) -> tuple[Op, Op]:
        # (checkpoints.save/load with the options: the same writer and reader)
        name = f"pfio-{'proxy-' if url_endpoint else ''}single.pt"
        options = {**OPTIONS, **({"endpoint": url_endpoint} if url_endpoint else {})}

        def save() -> None:
            with from_url(f"s3://{bucket}", **options) as fs, fs.open(name, "wb") as f:
                torch.save(state, f)

        def load() -> None:
            with from_url(f"s3://{bucket}", **options) as fs, fs.open(name, "rb") as f:
                _check(torch.load(f), state)
        return save, load

    config = S3ClientConfig(force_path_style=True)
    s3tc_write = S3Checkpoint(REGION, endpoint=proxy, s3client_config=config)
    s3tc_read = S3Checkpoint(REGION, endpoint=endpoint, s3client_config=config)
    s3tc_url = f"s3://{bucket}/s3tc-single.pt"

    def s3tc_save() -> None:
        with s3tc_write.writer(s3tc_url) as f:
            torch.save(state, f)

    def s3tc_load() -> None:
        with s3tc_read.reader(s3tc_url) as f:
            _check(torch.load(f), state)

    from botocore.config import Config

    client = boto3.session.Session().client("s3", endpoint_url=endpoint,
                                            config=Config(read_timeout=60))

    def boto3_save() -> None:
        buffer = io.BytesIO()
        torch.save(state, buffer)
        buffer.seek(0)
        client.upload_fileobj(buffer, bucket, "boto3-single.pt")

    def boto3_load() -> None:
        body = client.get_object(Bucket=bucket, Key="boto3-single.pt")["Body"].read()
        _check(torch.load(io.BytesIO(body)), state)

    local = os.path.join(tmp, "single.pt")

    def local_save() -> None:
        with open(local, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())

    def local_load() -> None:
        _check(torch.load(local), state)

    return {"pfio": pfio_ops(None), "pfio via proxy": pfio_ops(proxy),
            "s3tc": (s3tc_save, s3tc_load), "boto3": (boto3_save, boto3_load),
            "local disk": (local_save, local_load)}


# -- measuring -------------------------------------------------------------------------------

def _timed(op: Op) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of ``op``; tried once more when it fails
    (a busy shared gateway), the failure printed."""
    for attempt in (1, 2):
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            op()
        except Exception as exc:  # noqa: BLE001 - printed, then tried again or raised
            print(f"{op.__qualname__} failed ({exc!r}); attempt {attempt} of 2",
                  file=sys.stderr, flush=True)
            if attempt == 2:
                raise
            continue
        break
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(groups: dict[str, dict[str, tuple[Op, Op]]], rounds: int,
            gib: float) -> dict[tuple[str, str, str], list[tuple[float, float]]]:
    """(group, client, "save"|"load") -> [(GB/s, CPU s/GiB)] per round. In each round and
    group the clients save in turn, then load in turn, in an order rotated every round (so
    that no client always follows its own save, or the same neighbour, on the gateway)."""
    found: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for turn in range(rounds):
        for group, clients in groups.items():
            names = list(clients)
            names = names[turn % len(names):] + names[:turn % len(names)]
            for what, index in (("save", 0), ("load", 1)):
                for name in names:
                    wall, cpu = _timed(clients[name][index])
                    found.setdefault((group, name, what), []).append(
                        (gib * (1 << 30) / 1e9 / wall, cpu / gib))
    return found


#: (group, operation) -> [(baseline client, target)]: ours (pfio, or pfio via proxy
#: against s3tc, whose saves go through the proxy; its loads do not) / baseline must reach
#: the target
TARGETS = {
    ("dcp t1", "load"): [("s3tc", 1.2), ("local disk", 0.5)],
    ("dcp t4", "load"): [("s3tc", 1.2), ("local disk", 0.5)],
    ("dcp t1", "save"): [("s3tc", 1.1)],
    ("dcp t4", "save"): [("s3tc", 1.1)],
    ("single file", "save"): [("s3tc", 1.0), ("boto3", None)],
    ("single file", "load"): [("s3tc", 1.3), ("boto3", None)],
}


def rows_of(found: dict[tuple[str, str, str], list[tuple[float, float]]],
            server: str) -> list[Row]:
    rows = []
    for (group, what), baselines in TARGETS.items():
        for baseline, target in baselines:
            # s3tc saves through the proxy: compared with pfio's saves through it
            ours_name = "pfio via proxy" if what == "save" and baseline == "s3tc" else "pfio"
            ours = [g for g, _ in found[(group, ours_name, what)]]
            theirs = [g for g, _ in found[(group, baseline, what)]]
            rows.append(Row(f"checkpoints ({server})", f"{group} {what} ({ours_name})",
                            statistics.median(ours), baseline, statistics.median(theirs),
                            target, unit="GB/s"))
    return rows


def report(found: dict[tuple[str, str, str], list[tuple[float, float]]]) -> None:
    """Print every client's median GB/s with its spread, and CPU s/GiB."""
    print("| group | client | op | GB/s median | min-max | CPU s/GiB median |")
    print("|---|---|---|---:|---:|---:|")
    for (group, name, what), values in found.items():
        rates = sorted(g for g, _ in values)
        cpus = [c for _, c in values]
        print(f"| {group} | {name} | {what} | {statistics.median(rates):.3f} | "
              f"{rates[0]:.3f}-{rates[-1]:.3f} | {statistics.median(cpus):.2f} |")


def run(quick: bool) -> list[Row]:
    warnings.simplefilter("ignore")
    size = 32 if quick else SIZE_MIB
    rounds = 1 if quick else ROUNDS
    state = make_state(size)
    gib = sum(v.numel() * v.element_size() for v in state.values()) / (1 << 30)
    template = {k: torch.empty_like(v) for k, v in state.items()}
    tmp = tempfile.mkdtemp(prefix="bench-ckpt-")
    try:
        with s3_server("bench-ckpt") as (server, bucket, settings), \
                ETagProxy(settings["S3_ENDPOINT"]) as proxy:
            endpoint = settings["S3_ENDPOINT"]
            groups = {
                "dcp t1": dcp_clients(state, template, bucket, endpoint, proxy.endpoint,
                                      tmp, 1),
                "dcp t4": dcp_clients(state, template, bucket, endpoint, proxy.endpoint,
                                      tmp, 4),
                "single file": single_file_clients(state, bucket, endpoint, proxy.endpoint,
                                                   tmp),
            }
            print(f"state: {gib * 1024:.0f} MiB in {len(state)} tensors; {rounds} rounds on "
                  f"{server}; {os.cpu_count()} CPUs (shared)", flush=True)
            found = measure(groups, rounds, gib)
            report(found)
            return rows_of(found, server)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(run)
