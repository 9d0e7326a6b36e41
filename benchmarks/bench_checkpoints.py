"""Checkpoints on S3 (issue 35): pfio against s3torchconnector 1.5 (s3tc), boto3 and local
disk, on the Ceph RADOS Gateway where one runs (else a moto server).

* DCP save and load (``torch.distributed.checkpoint``, one process) with ``thread_count`` 1
  and 4: pfio's ``PfioWriter``/``PfioReader`` against s3tc's ``S3StorageWriter``/
  ``S3StorageReader`` and DCP's own ``FileSystemWriter``/``Reader`` on local disk;
* single-file save and load (``torch.save``/``torch.load`` of the whole state):
  ``pfio.integrations.torch.checkpoints.save``/``load`` against s3tc's ``S3Checkpoint``, boto3
  (``upload_fileobj``/``get_object`` through memory) and local disk.

* ``dcp.async_save`` (DCP's thread-based asynchronous save): its time to return and its
  total time, with the same writers (4 threads) and local disk.

The state is a model and its optimizer (tensors of 64 KiB to 4 MiB; ``SIZE_MIB`` in all,
or ``PFIO_BENCH_CHECKPOINT_MIB``: a small state measures set-up more than transfer),
every load checked tensor by tensor. Every operation runs once on a 1 MiB state before
anything is timed (what a process sets up once is no round's). Clients take turns for
``ROUNDS`` rounds, in an order rotated every round (no client always first or last); the
objects of a round are deleted before the next, and the gateway's garbage is collected
(``radosgw-admin gc process --include-all``) before every save, so that no client pays for
another's. Each figure is the median over the rounds (GB/s of state), with the spread
(min-max) and every round's printed, and the CPU time per GiB of the client (user + system
of this process, native threads included), of the gateway (its ``radosgw`` and ``ceph-osd``
processes, from ``/proc``: on this machine they share the client's cores) and of the proxy
below. What is timed is the save or load alone (``with CLOCK:``): not the allocation of the
state dict a DCP load fills (a model that exists already, its memory touched) nor the check.

``PFIO_BENCH_CHECKPOINT_OPS=save`` measures the saves alone; ``..._CLIENTS`` may name pfio's
experimental settings (:data:`VARIANTS`: ``pfio md5 via proxy``, ``pfio 16 MiB parts via
proxy``, ...), which are measured only then.

Then, once per client and operation, a fresh process (after a warm-up save and load of a
small state, so that what a process sets up once is not counted) runs the operation with
all its S3 requests through the proxy, which counts them (GETs, PUTs, ...), and reports the
peak rise of its resident set during the operation (Linux: ``VmHWM`` after resetting it
through ``/proc/self/clear_refs``). For a single-file load that rise includes the loaded
state itself, for every client.

s3tc 1.5 cannot finish a multipart upload on Ceph 16: its CRT client wants an ``ETag``
header on CompleteMultipartUpload's answer, which Ceph gives only in the XML body. Its saves
go through :class:`ETagProxy`, a small loopback proxy that adds the header, run in a process
of its own (:class:`ETagProxyProcess`: its CPU and GIL are no client's); pfio saves through
the same proxy too (the ``via proxy`` rows), a control for what the proxy costs.
The targets compare like with like: s3tc's saves with pfio's through the proxy.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.request import urlopen

import torch
import torch.distributed.checkpoint as dcp
from etag_proxy import ETagProxyProcess
from harness import Row, main, s3_server

from pfio import from_url
from pfio.integrations.torch.dcp import PfioReader, PfioWriter

MIB = 1 << 20
SIZE_MIB = int(os.environ.get("PFIO_BENCH_CHECKPOINT_MIB", "64"))
ROUNDS = int(os.environ.get("PFIO_BENCH_CHECKPOINT_ROUNDS", "3"))
#: the groups measured (comma-separated names of :func:`all_clients`' groups; all if empty)
GROUPS = [g.strip() for g in os.environ.get("PFIO_BENCH_CHECKPOINT_GROUPS", "").split(",")
          if g.strip()]
#: the clients measured (comma-separated names; all if empty): at a large state, fewer
#: copies on the gateway at once
#: whether each client's requests and memory are profiled in fresh processes ("0": not)
PROFILE = os.environ.get("PFIO_BENCH_CHECKPOINT_PROFILE", "1") != "0"
CLIENTS = [c.strip() for c in os.environ.get("PFIO_BENCH_CHECKPOINT_CLIENTS", "").split(",")
           if c.strip()]
#: the operations measured ("save", "load"; both if empty)
OPS = [o.strip() for o in os.environ.get("PFIO_BENCH_CHECKPOINT_OPS", "").split(",")
       if o.strip()]
#: pfio's experimental settings: each is a client "pfio <name> via proxy", measured only
#: when PFIO_BENCH_CHECKPOINT_CLIENTS names it
VARIANTS: dict[str, dict[str, object]] = {
    "md5": {"write_digest": "md5"},
    "16 MiB parts": {"mpu_chunksize": 16 * MIB},
    "16 MiB parts 4 in flight": {"mpu_chunksize": 16 * MIB, "mpu_concurrency": 4},
    "32 MiB parts": {"mpu_chunksize": 32 * MIB},
    "4 in flight": {"mpu_concurrency": 4},
    "16 in flight": {"mpu_concurrency": 16},
}
REGION = "us-east-1"
#: pfio's S3 options here: a read timeout as long as the other clients' (a gateway shared
#: by a busy machine can be silent for more than pfio's default 10 s)
OPTIONS = {"read_timeout": 60}


def make_state(size_mib: int) -> dict[str, torch.Tensor]:
    """A model (weights of 64 KiB to 4 MiB) and Adam-like optimizer state of ``size_mib``."""
    generator = torch.Generator().manual_seed(size_mib)  # (the profiling processes' too)
    state: dict[str, torch.Tensor] = {}
    sizes = [64 << 10, 256 << 10, 1 << 20, 4 << 20]
    total, i = 0, 0
    while total < size_mib * MIB:
        n = sizes[i % len(sizes)] // 4
        weight = torch.randn(n, generator=generator)
        state[f"model.layer{i}.weight"] = weight
        state[f"optim.layer{i}.exp_avg"] = torch.randn(n, generator=generator)
        total += 2 * weight.numel() * 4
        i += 1
    return state


def _check(loaded: dict[str, torch.Tensor], state: dict[str, torch.Tensor]) -> None:
    for key, value in state.items():
        if not torch.equal(loaded[key], value):
            raise AssertionError(f"{key} differs after the load")


def _fresh(template: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A state dict to load into: a model that exists already (its memory touched)."""
    return {k: torch.zeros_like(v) for k, v in template.items()}


def _status_kib(field: str) -> int:
    """A ``kB`` field of ``/proc/self/status``."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``; 0 when gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Clock:
    """The wall and CPU seconds spent inside ``with CLOCK:`` since :meth:`reset` (what an
    operation times), the CPU seconds of the processes in :attr:`watched` (name -> pids:
    the gateway's daemons, the proxy) during those blocks, the time at each :meth:`mark`,
    and with ``track_memory`` the peak rise of the resident set inside the first block."""

    def __init__(self) -> None:
        self.track_memory = False
        self.watched: dict[str, list[int]] = {}
        self.reset()

    def reset(self) -> None:
        self.wall = self.cpu = 0.0
        self.others = dict.fromkeys(self.watched, 0.0)
        self.marks: dict[str, float] = {}
        self.rss_rise: int | None = None

    def _others_now(self) -> dict[str, float]:
        return {name: sum(map(_cpu_seconds, pids)) for name, pids in self.watched.items()}

    def __enter__(self) -> Clock:
        if self.track_memory and self.rss_rise is None:
            self._rss = _status_kib("VmRSS")
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset the peak resident set size (VmHWM)
        self._others = self._others_now()
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def mark(self, name: str) -> None:
        """Note the seconds spent so far (inside a block) as ``name``."""
        self.marks[name] = self.wall + time.perf_counter() - self._wall

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._wall
        self.cpu += time.process_time() - self._cpu
        for name, seconds in self._others_now().items():
            self.others[name] += seconds - self._others[name]
        if self.track_memory and self.rss_rise is None:
            self.rss_rise = (_status_kib("VmHWM") - self._rss) * 1024


CLOCK = Clock()


# -- the clients -------------------------------------------------------------------------------

Op = Callable[[], None]
#: group -> client -> (save, load or None)
Groups = dict[str, dict[str, tuple[Op, Op | None]]]


def _s3tc_client(endpoint: str):
    from s3torchconnector import S3ClientConfig
    from s3torchconnector._s3client import S3Client

    return S3Client(REGION, endpoint=endpoint,
                    s3client_config=S3ClientConfig(force_path_style=True))


def dcp_clients(state, template, bucket: str, endpoint: str, proxy: str, tmp: str,
                threads: int, tag: str = "") -> dict[str, tuple[Op, Op | None]]:
    """name -> (save, load) of the DCP clients with ``threads`` writer threads (their keys
    start with ``tag``)."""
    from s3torchconnector.dcp import S3StorageReader, S3StorageWriter

    def pfio_ops(key: str, options: dict | None) -> tuple[Op, Op]:
        url = f"s3://{bucket}/{tag}{key}"

        def save() -> None:
            writer = PfioWriter(url, thread_count=threads, storage_options=options)
            with CLOCK:
                dcp.save(state, storage_writer=writer, no_dist=True)

        def load() -> None:
            loaded = _fresh(template)
            with CLOCK:
                dcp.load(loaded, storage_reader=PfioReader(url, storage_options=options),
                         no_dist=True)
            _check(loaded, state)
        return save, load

    s3tc_url = f"s3://{bucket}/{tag}s3tc-dcp{threads}"

    def s3tc_save() -> None:
        with CLOCK:
            writer = S3StorageWriter(REGION, s3tc_url, thread_count=threads)
            writer.fs._client = _s3tc_client(proxy)
            dcp.save(state, storage_writer=writer, no_dist=True)

    def s3tc_load() -> None:
        loaded = _fresh(template)
        with CLOCK:
            reader = S3StorageReader(REGION, s3tc_url)
            reader.fs._client = _s3tc_client(endpoint)
            dcp.load(loaded, storage_reader=reader, no_dist=True)
        _check(loaded, state)

    local = os.path.join(tmp, f"{tag}dcp{threads}")
    raw_load = _raw_gets(bucket, f"{tag}pfio-dcp{threads}/", endpoint, threads)

    def local_save() -> None:
        with CLOCK:
            dcp.save(state, storage_writer=dcp.FileSystemWriter(local, thread_count=threads),
                     no_dist=True)

    def local_load() -> None:
        loaded = _fresh(template)
        with CLOCK:
            dcp.load(loaded, storage_reader=dcp.FileSystemReader(local), no_dist=True)
        _check(loaded, state)

    return {"pfio": pfio_ops(f"pfio-dcp{threads}", {**OPTIONS, "endpoint": endpoint}),
            "pfio via proxy": pfio_ops(f"pfio-proxy-dcp{threads}",
                                       {**OPTIONS, "endpoint": proxy}),
            **{f"pfio {name} via proxy": pfio_ops(f"pfio-{_slug(name)}-dcp{threads}",
                                                  {**OPTIONS, **options, "endpoint": proxy})
               for name, options in _variants()},
            "s3tc": (s3tc_save, s3tc_load),
            "local disk": (local_save, local_load),
            "raw GETs": (None, raw_load)}


def _variants() -> list[tuple[str, dict[str, object]]]:
    """The :data:`VARIANTS` that ``PFIO_BENCH_CHECKPOINT_CLIENTS`` names."""
    return [(name, options) for name, options in VARIANTS.items()
            if f"pfio {name} via proxy" in CLIENTS]


def _slug(name: str) -> str:
    return name.replace(" ", "-")


def _raw_gets(bucket: str, prefix: str, endpoint: str, threads: int) -> Op:
    """A plain reader's ceiling on the gateway: the objects under ``prefix`` (pfio's
    checkpoint) read with ranged GETs of 8 MiB by ``threads`` threads into memory, no torch
    (boto3)."""
    from concurrent.futures import ThreadPoolExecutor

    import boto3
    from botocore.config import Config

    client = boto3.session.Session().client(
        "s3", endpoint_url=endpoint,
        config=Config(read_timeout=60, max_pool_connections=max(10, threads)))

    def get(key: str, start: int, end: int) -> int:
        body = client.get_object(Bucket=bucket, Key=key, Range=f"bytes={start}-{end}")["Body"]
        return len(body.read())

    def load() -> None:
        objects = [(o["Key"], o["Size"]) for page in client.get_paginator(
            "list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            for o in page.get("Contents", ())]
        ranges = [(key, start, min(start + 8 * MIB, size) - 1) for key, size in objects
                  for start in range(0, size, 8 * MIB)]
        with CLOCK, ThreadPoolExecutor(threads) as pool:
            got = sum(pool.map(lambda r: get(*r), ranges))
        if got != sum(size for _, size in objects):
            raise AssertionError(f"read {got} bytes of {prefix}")
    return load


def async_clients(state, bucket: str, endpoint: str, proxy: str, tmp: str,
                  tag: str = "") -> dict[str, tuple[Op, Op | None]]:
    """name -> (``dcp.async_save`` with 4 writer threads, None): the time to return is
    marked ``return``, the total is the operation's."""
    from s3torchconnector.dcp import S3StorageWriter

    def save_with(make_writer: Callable[[], object]) -> Op:
        def save() -> None:
            with CLOCK:
                done = dcp.async_save(state, storage_writer=make_writer(), no_dist=True)
                CLOCK.mark("return")
                done.result()
        return save

    def pfio_writer(key: str, options: dict) -> Callable[[], object]:
        return lambda: PfioWriter(f"s3://{bucket}/{tag}{key}", thread_count=4,
                                  storage_options=options)

    def s3tc_writer() -> object:
        writer = S3StorageWriter(REGION, f"s3://{bucket}/{tag}s3tc-async", thread_count=4)
        writer.fs._client = _s3tc_client(proxy)
        return writer

    local = os.path.join(tmp, f"{tag}async")
    return {"pfio": (save_with(pfio_writer("pfio-async", {**OPTIONS, "endpoint": endpoint})),
                     None),
            "pfio via proxy": (save_with(pfio_writer("pfio-proxy-async",
                                                     {**OPTIONS, "endpoint": proxy})), None),
            "s3tc": (save_with(s3tc_writer), None),
            "local disk": (save_with(lambda: dcp.FileSystemWriter(local, thread_count=4)),
                           None)}


def single_file_clients(state, bucket: str, endpoint: str, proxy: str,
                        tmp: str, tag: str = "") -> dict[str, tuple[Op, Op | None]]:
    """name -> (save, load) of the single-file clients."""
    import boto3
    from s3torchconnector import S3Checkpoint, S3ClientConfig

    def pfio_ops(key: str, options: dict[str, object]) -> tuple[Op, Op]:
        # (checkpoints.save/load with the options: the same writer and reader)
        name = f"{tag}{key}"

        def save() -> None:
            with CLOCK, from_url(f"s3://{bucket}", **options) as fs, fs.open(name, "wb") as f:
                torch.save(state, f)

        def load() -> None:
            with CLOCK, from_url(f"s3://{bucket}", **options) as fs, fs.open(name, "rb") as f:
                loaded = torch.load(f)
            _check(loaded, state)
        return save, load

    config = S3ClientConfig(force_path_style=True)
    s3tc_write = S3Checkpoint(REGION, endpoint=proxy, s3client_config=config)
    s3tc_read = S3Checkpoint(REGION, endpoint=endpoint, s3client_config=config)
    s3tc_url = f"s3://{bucket}/{tag}s3tc-single.pt"

    def s3tc_save() -> None:
        with CLOCK, s3tc_write.writer(s3tc_url) as f:
            torch.save(state, f)

    def s3tc_load() -> None:
        with CLOCK, s3tc_read.reader(s3tc_url) as f:
            loaded = torch.load(f)
        _check(loaded, state)

    from botocore.config import Config

    client = boto3.session.Session().client("s3", endpoint_url=endpoint,
                                            config=Config(read_timeout=60))

    def boto3_save() -> None:
        with CLOCK:
            buffer = io.BytesIO()
            torch.save(state, buffer)
            buffer.seek(0)
            client.upload_fileobj(buffer, bucket, f"{tag}boto3-single.pt")

    def boto3_load() -> None:
        with CLOCK:
            body = client.get_object(Bucket=bucket, Key=f"{tag}boto3-single.pt")["Body"]
            loaded = torch.load(io.BytesIO(body.read()))
        _check(loaded, state)

    local = os.path.join(tmp, f"{tag}single.pt")

    def local_save() -> None:
        with CLOCK, open(local, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())

    def local_load() -> None:
        with CLOCK:
            loaded = torch.load(local)
        _check(loaded, state)

    return {"pfio": pfio_ops("pfio-single.pt", {**OPTIONS, "endpoint": endpoint}),
            "pfio via proxy": pfio_ops("pfio-proxy-single.pt", {**OPTIONS, "endpoint": proxy}),
            **{f"pfio {name} via proxy": pfio_ops(f"pfio-{_slug(name)}-single.pt",
                                                  {**OPTIONS, **options, "endpoint": proxy})
               for name, options in _variants()},
            "s3tc": (s3tc_save, s3tc_load), "boto3": (boto3_save, boto3_load),
            "local disk": (local_save, local_load)}


def all_clients(size_mib: int, bucket: str, endpoint: str, proxy: str, tmp: str,
                tag: str = "") -> tuple[Groups, float]:
    """The groups of clients for a state of ``size_mib``, and its size in GiB."""
    state = make_state(size_mib)
    template = {k: torch.empty_like(v) for k, v in state.items()}
    makers: dict[str, Callable[[], dict[str, tuple[Op, Op | None]]]] = {
        "dcp t1": lambda: dcp_clients(state, template, bucket, endpoint, proxy, tmp, 1, tag),
        "dcp t4": lambda: dcp_clients(state, template, bucket, endpoint, proxy, tmp, 4, tag),
        "dcp async_save t4": lambda: async_clients(state, bucket, endpoint, proxy, tmp, tag),
        "single file": lambda: single_file_clients(state, bucket, endpoint, proxy, tmp, tag),
    }
    groups: Groups = {name: {client: ops for client, ops in make().items()
                             if not CLIENTS or client in CLIENTS}
                      for name, make in makers.items() if not GROUPS or name in GROUPS}
    return groups, sum(v.numel() * v.element_size() for v in state.values()) / (1 << 30)


# -- measuring -------------------------------------------------------------------------------

class Figures(NamedTuple):
    """One operation's figures."""

    rate: float  # GB/s of state
    cpu: float  # this process's CPU s/GiB
    returned: float | None  # the seconds to return (async saves)
    #: CPU s/GiB of the gateway's daemons (radosgw and ceph-osd), of the proxy
    gateway: float | None
    proxy: float | None


Found = dict[tuple[str, str, str], list[Figures]]


def _timed(op: Op, gib: float) -> Figures:
    """The figures of ``op``'s timed part, for a state of ``gib``; tried once more when
    it fails (a busy shared gateway), the failure printed."""
    for attempt in (1, 2):
        CLOCK.reset()
        try:
            op()
        except Exception as exc:  # noqa: BLE001 - printed, then tried again or raised
            print(f"{op.__qualname__} failed ({exc!r}); attempt {attempt} of 2",
                  file=sys.stderr, flush=True)
            if attempt == 2:
                raise
            continue
        break
    gateway, proxy = CLOCK.others.get("gateway"), CLOCK.others.get("proxy")
    return Figures(gib * (1 << 30) / 1e9 / CLOCK.wall, CLOCK.cpu / gib, CLOCK.marks.get("return"),
                   None if gateway is None else gateway / gib,
                   None if proxy is None else proxy / gib)


def empty_bucket(bucket: str, endpoint: str) -> None:
    """Delete the objects in ``bucket`` (the gateway's memory store is small and shared: a
    group's checkpoints go before the next group's are written)."""
    import boto3

    client = boto3.session.Session().client("s3", endpoint_url=endpoint)
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", ())]
        if keys:
            client.delete_objects(Bucket=bucket, Delete={"Objects": keys})


def warm_up(groups: Groups) -> None:
    """Run every operation once, untimed (``groups`` of a small state): what a process
    sets up once (imports, connections, the probe of an endpoint) is no round's."""
    for clients in groups.values():
        for ops in clients.values():
            for op in ops:
                if op is not None:
                    op()


def _ceph_dir() -> Path | None:
    """The directory of the Ceph cluster whose gateway is measured (``scripts/ceph-rgw.sh``:
    the one of the file ``PFIO_CEPH_ENV``), None when there is none."""
    directory = Path(os.environ.get("PFIO_CEPH_ENV", "/tmp/pfio-ceph/env")).parent
    return directory if (directory / "ceph.conf").exists() else None


def gateway_pids() -> list[int]:
    """The process ids of the gateway's radosgw and ceph-osd daemons (none off Ceph)."""
    directory = _ceph_dir()
    if directory is None:
        return []
    return [int(path.read_text()) for pattern in ("client.rgw.*.pid", "osd.*.pid")
            for path in (directory / "run").glob(pattern)]


def collect_garbage() -> None:
    """Run the gateway's garbage collection now (what deletes and overwrites left), so that
    no client's save pays for what another's left; nothing off Ceph."""
    directory = _ceph_dir()
    if directory is None:
        return
    answer = subprocess.run(["radosgw-admin", "-c", str(directory / "ceph.conf"), "gc",
                             "process", "--include-all"], capture_output=True, text=True,
                            timeout=300)
    if answer.returncode:
        print(f"the gateway's garbage collection failed: {answer.stderr[-500:]}",
              file=sys.stderr, flush=True)


def measure(groups: Groups, rounds: int, gib: float, done: Callable[[], None] = lambda: None,
            before_save: Callable[[], None] = lambda: None) -> Found:
    """(group, client, "save"|"load") -> [figures] per round. Group by group, in each round
    the clients save in turn, then load in turn, in an order rotated every round (so that
    no client always follows its own save, or the same neighbour, on the gateway); ``done``
    is called after each group and before each round but the first (the objects of the
    round before go), ``before_save`` before each save (the gateway's garbage of the client
    before is collected: no client pays for another's)."""
    found: Found = {}
    operations = [(what, index) for what, index in (("save", 0), ("load", 1))
                  if not OPS or what in OPS]
    for group, clients in groups.items():
        for turn in range(rounds):
            if turn:
                done()
            names = list(clients)
            names = names[turn % len(names):] + names[:turn % len(names)]
            print(f"{group}, round {turn + 1}: {', '.join(names)}", file=sys.stderr,
                  flush=True)
            for what, index in operations:
                for name in names:
                    op = clients[name][index]
                    if op is None:
                        continue
                    if what == "save":
                        before_save()
                    try:
                        figures = _timed(op, gib)
                    except Exception:  # noqa: BLE001 - printed by _timed; the others go on
                        continue
                    print(f"  {name} {what}: {figures.rate:.3f} GB/s", file=sys.stderr,
                          flush=True)
                    found.setdefault((group, name, what), []).append(figures)
        done()
    return found


def profile(size_mib: int, bucket: str, proxy: ETagProxyProcess, tmp: str,
            groups: Groups, done: Callable[[], None] = lambda: None
            ) -> dict[tuple[str, str, str], dict[str, int]]:
    """(group, client, op) -> {"rss": peak rise in bytes, "GET": n, "PUT": n, ...}: each
    client's operations of each group in a fresh process, their requests through ``proxy``
    (see the module documentation). Large blocks are mapped and unmapped, never kept by
    the C allocator (``MALLOC_MMAP_THRESHOLD_``), so that a save does not lend its freed
    memory to the load after it."""
    found = {}
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(128 << 10)}
    for group, clients in groups.items():
        for name in clients:
            if name in ("pfio via proxy", "raw GETs"):  # (here every client goes through
                continue                                # the proxy; raw GETs: no torch)
            answer = subprocess.run([sys.executable, __file__, "--profile", group, name,
                                     str(size_mib), bucket, proxy.endpoint, tmp],
                                    capture_output=True, text=True, timeout=600, env=env)
            if answer.returncode:  # (printed; the others go on)
                print(f"profiling {group} {name} failed: {answer.stderr[-2000:]}",
                      file=sys.stderr, flush=True)
                done()
                continue
            for what, seen in json.loads(answer.stdout).items():
                found[(group, name, what)] = seen
            done()
    return found


def _profile_main(group: str, name: str, size_mib: str, bucket: str, proxy: str,
                  tmp: str) -> None:
    """The operations of one client of :func:`profile`, in this (fresh) process."""
    warnings.simplefilter("ignore")
    warm, _ = all_clients(1, bucket, proxy, proxy, tmp, tag="warm-up-")
    for op in warm[group][name]:
        if op is not None:
            op()
    groups, _ = all_clients(int(size_mib), bucket, proxy, proxy, tmp)
    found = {}
    CLOCK.track_memory = True
    for what, op in zip(("save", "load"), groups[group][name], strict=True):
        if op is not None:
            urlopen(f"{proxy}/-/reset").read()  # the proxy counts from here
            CLOCK.reset()
            op()
            found[what] = {"rss": CLOCK.rss_rise,
                           **json.loads(urlopen(f"{proxy}/-/counts").read())}
    print(json.dumps(found))


#: (group, operation) -> [(baseline client, target)]: ours (pfio, or pfio via proxy
#: against s3tc, whose saves go through the proxy; its loads do not) / baseline must reach
#: the target
TARGETS = {
    ("dcp t1", "load"): [("s3tc", 1.2), ("local disk", 0.5)],
    ("dcp t4", "load"): [("s3tc", 1.2), ("local disk", 0.5), ("raw GETs", None)],
    ("dcp t1", "save"): [("s3tc", 1.1)],
    ("dcp t4", "save"): [("s3tc", 1.1)],
    ("dcp async_save t4", "save"): [("s3tc", None)],
    ("single file", "save"): [("s3tc", 1.0), ("boto3", None)],
    ("single file", "load"): [("s3tc", 1.3), ("boto3", None)],
}


def rows_of(found: Found, server: str) -> list[Row]:
    rows = []
    for (group, what), baselines in TARGETS.items():
        for baseline, target in baselines:
            # s3tc saves through the proxy: compared with pfio's saves through it
            ours_name = "pfio via proxy" if what == "save" and baseline == "s3tc" else "pfio"
            if {(group, baseline, what), (group, ours_name, what)} - found.keys():
                continue  # (a group not measured, or a client that failed)
            ours = found[(group, ours_name, what)]
            theirs = found[(group, baseline, what)]
            rows.append(Row(f"checkpoints ({server})", f"{group} {what} ({ours_name})",
                            statistics.median(f.rate for f in ours), baseline,
                            statistics.median(f.rate for f in theirs), target, unit="GB/s"))
            if ours[0].returned is not None:
                rows.append(Row(f"checkpoints ({server})",
                                f"{group} time to return ({ours_name})",
                                statistics.median(f.returned or 0.0 for f in ours), baseline,
                                statistics.median(f.returned or 0.0 for f in theirs), None,
                                higher_is_better=False, unit="s"))
    return rows


def report(found: Found, profiled: dict[tuple[str, str, str], dict[str, int]]) -> None:
    """Print every client's median GB/s with its spread and each round's, the CPU s/GiB
    of the client, the gateway and the proxy (median), the time to return of async saves,
    and the profile (peak RSS rise, requests) of each operation."""
    print("| group | client | op | GB/s median | min-max | per round | CPU s/GiB: client, "
          "gateway, proxy | return s (min-max) | extra RSS MiB | requests |")
    print("|---|---|---|---:|---:|---|---:|---:|---:|---|")
    for (group, name, what), values in found.items():
        rates = sorted(f.rate for f in values)
        rounds = ", ".join(f"{f.rate:.3f}" for f in values)
        cpus = ", ".join(_median_of([getattr(f, field) for f in values])
                         for field in ("cpu", "gateway", "proxy"))
        returns = sorted(f.returned for f in values if f.returned is not None)
        back = (f"{statistics.median(returns):.3f} ({returns[0]:.3f}-{returns[-1]:.3f})"
                if returns else "")
        seen = profiled.get((group, "pfio" if name == "pfio via proxy" else name, what), {})
        rss = f"{seen['rss'] / MIB:.0f}" if "rss" in seen else ""
        requests = ", ".join(f"{n} {m}" for m, n in sorted(seen.items()) if m != "rss")
        print(f"| {group} | {name} | {what} | {statistics.median(rates):.3f} | "
              f"{rates[0]:.3f}-{rates[-1]:.3f} | {rounds} | {cpus} | {back} | "
              f"{rss} | {requests} |")


def _median_of(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    return f"{statistics.median(known):.2f}" if known else "-"


def run(quick: bool) -> list[Row]:
    warnings.simplefilter("ignore")
    size = 32 if quick else SIZE_MIB
    rounds = 1 if quick else ROUNDS
    tmp = tempfile.mkdtemp(prefix="bench-ckpt-")
    try:
        with s3_server("bench-ckpt") as (server, bucket, settings), \
                ETagProxyProcess(settings["S3_ENDPOINT"]) as proxy:
            groups, gib = all_clients(size, bucket, settings["S3_ENDPOINT"], proxy.endpoint,
                                      tmp)
            print(f"state: {gib * 1024:.0f} MiB; {rounds} rounds on {server}; "
                  f"{os.cpu_count()} CPUs (shared)", flush=True)
            began = time.perf_counter()
            endpoint = settings["S3_ENDPOINT"]
            warm_up(all_clients(1, bucket, endpoint, proxy.endpoint, tmp, "warm-up-")[0])
            empty_bucket(bucket, endpoint)
            CLOCK.watched = {"gateway": gateway_pids(), "proxy": [proxy.pid]}

            def clean() -> None:
                empty_bucket(bucket, endpoint)
                collect_garbage()
            found = measure(groups, rounds, gib, clean, collect_garbage)
            CLOCK.watched = {}
            print(f"measured in {time.perf_counter() - began:.0f} s", file=sys.stderr,
                  flush=True)
            profiled = {} if quick or not PROFILE else profile(size, bucket, proxy, tmp, groups,
                                                lambda: empty_bucket(bucket, endpoint))
            report(found, profiled)
            return rows_of(found, server)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--profile"]:
        _profile_main(*sys.argv[2:])
    else:
        main(run)
