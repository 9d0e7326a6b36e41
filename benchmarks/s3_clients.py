"""pfio against the native S3 clients on one S3 server (issue 15): each client in its own
process, pfio through its public API with its default engine (``PFIO_S3_ENGINE`` passes
through); boto3's plain client, obstore and s3torchconnectorclient in their own
virtualenvs.

Every client runs the same three workloads, each timed in the client's process:

* ``objects``: whole GETs of ``count`` objects of 100 KiB by 8 threads: objects/s and the
  client's CPU time (user + system of its whole process, native threads included) per GET;
* ``ranges``: 8 threads read random 64 KiB ranges: the data of the members of a stored zip
  (pfio opens the zip and reads members; the others GET the same byte ranges): reads/s;
* ``sequential``: one large object read front to back in 8 MiB pieces, 3 times: MB/s of the
  fastest read.

The clients take turns (pfio, boto3, obstore,
s3torchconnectorclient, then again), each keeping its best figures, so that a busy moment of
a shared machine hurts them alike.
"""

from __future__ import annotations

import io
import os
import random
import struct
import sys
import textwrap
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from harness import Row, run_in_baseline, run_script

import pfio

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20
THREADS = 8

#: pfio's code (see :data:`CLIENTS`); ``ENGINE_SETTING`` becomes the line choosing its engine
_PFIO = """
        import os
        ENGINE_SETTING
        import pfio
        VERSION = "pfio" + (f", engine {os.environ['PFIO_S3_ENGINE']}" if ENGINE_NAMED else "")
        fs = pfio.from_url(f"s3://{BUCKET}/", endpoint=ENDPOINT)
        archive = pfio.from_url(f"s3://{BUCKET}/{ZIP}", endpoint=ENDPOINT)
        def get(key):
            with fs.open(key, "rb") as f:
                return len(f.read())
        def member(name):
            with archive.open(name, "rb") as f:
                return len(f.read())
        def sequential(key):
            total = 0
            with fs.open(key, "rb") as f:
                while chunk := f.read(CHUNK):
                    total += len(chunk)
            return total
    """


def _pfio(engine: str | None) -> str:
    """pfio's code with its default engine (``$PFIO_S3_ENGINE`` passes through), or
    ``engine``."""
    setting = f"os.environ['PFIO_S3_ENGINE'] = {engine!r}" if engine else "pass"
    return _PFIO.replace("ENGINE_SETTING", setting).replace("ENGINE_NAMED", str(bool(engine)))


#: the code of each client: ``get(key)``, ``get_range(key, start, length)`` (pfio:
#: ``member(name)``) and ``sequential(key)`` return the number of bytes read; ``VERSION``
#: names the client and its version
CLIENTS: dict[str, str] = {
    "pfio": _pfio(None),
    "boto3": """
        import boto3
        from botocore.config import Config
        VERSION = f"boto3 {boto3.__version__}"
        client = boto3.client("s3", endpoint_url=ENDPOINT,
                              config=Config(max_pool_connections=THREADS))
        def get(key):
            return len(client.get_object(Bucket=BUCKET, Key=key)["Body"].read())
        def get_range(key, start, length):
            body = client.get_object(Bucket=BUCKET, Key=key,
                                     Range=f"bytes={start}-{start + length - 1}")["Body"]
            return len(body.read())
        def sequential(key):
            body = client.get_object(Bucket=BUCKET, Key=key)["Body"]
            return sum(len(chunk) for chunk in body.iter_chunks(CHUNK))
    """,
    "obstore": """
        import obstore
        from obstore.store import S3Store
        VERSION = f"obstore {obstore.__version__}"
        store = S3Store(BUCKET, endpoint=ENDPOINT, virtual_hosted_style_request=False,
                        client_options={"allow_http": True})
        def get(key):
            return len(obstore.get(store, key).bytes())
        def get_range(key, start, length):
            return len(obstore.get_range(store, key, start=start, length=length))
        def sequential(key):
            stream = obstore.get(store, key).stream(min_chunk_size=CHUNK)
            return sum(len(chunk) for chunk in stream)
    """,
    "s3torchconnectorclient": """
        import os
        import s3torchconnectorclient
        from s3torchconnectorclient._mountpoint_s3_client import MountpointS3Client
        VERSION = f"s3torchconnectorclient {s3torchconnectorclient.__version__}"
        client = MountpointS3Client(os.environ["AWS_DEFAULT_REGION"], endpoint=ENDPOINT,
                                    force_path_style=True)
        def get(key):
            return sum(len(chunk) for chunk in client.get_object(BUCKET, key))
        def get_range(key, start, length):
            return sum(len(chunk) for chunk in client.get_object(BUCKET, key, start,
                                                                 start + length))
        def sequential(key):
            return sum(len(chunk) for chunk in client.get_object(BUCKET, key))
    """,
}

#: the driver, after a client's code: one turn of the three workloads, printed as JSON
DRIVER = """
    import json, time
    from concurrent.futures import ThreadPoolExecutor

    def timed(fn, items, expected):
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(fn, items[:THREADS]))  # connections and archive directory: untimed
            cpu, wall = time.process_time(), time.perf_counter()
            total = sum(pool.map(fn, items))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert total == expected, (total, expected)
        return {"rate": len(items) / wall, "cpu_ms": cpu * 1000 / len(items)}

    objects = timed(get, KEYS, OBJECT_BYTES)
    if "member" in globals():
        ranges = timed(member, NAMES, RANGE_BYTES)
    else:
        ranges = timed(lambda r: get_range(ZIP, *r), RANGES, RANGE_BYTES)
    fastest = float("inf")
    for _ in range(SEQUENTIAL_READS):  # one read is short: a busy moment would decide it
        start = time.perf_counter()
        assert sequential(BIG) == BIG_BYTES
        fastest = min(fastest, time.perf_counter() - start)
    megabytes = BIG_BYTES / MIB / fastest
    print(json.dumps({"version": VERSION, "objects": objects, "ranges": ranges,
                      "sequential": megabytes}))
"""


@dataclass
class Data:
    """What the workloads read, stored in ``bucket``."""

    bucket: str
    keys: list[str]
    object_size: int
    zip_key: str
    members: list[str]  # the members read, in order
    ranges: list[tuple[int, int]]  # (start, length) of their data in the zip
    big_key: str
    big_size: int


def _member_ranges(archive: bytes) -> dict[str, tuple[int, int]]:
    """Where the data of each (stored) member of ``archive`` lies: name -> (start, length)."""
    found = {}
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        for info in z.infolist():
            name_length, extra_length = struct.unpack_from("<HH", archive, info.header_offset + 26)
            found[info.filename] = (info.header_offset + 30 + name_length + extra_length,
                                    info.compress_size)
    return found


def store_data(endpoint: str, quick: bool, bucket: str = "bench-native") -> Data:
    """Write the objects, the zip and the large object of the workloads with pfio."""
    count, member_count, reads = (200, 300, 200) if quick else (1000, 2000, 1000)
    object_size, member_size, big_size = 100 << 10, 64 << 10, (32 if quick else 256) * MIB
    fs = pfio.from_url(f"s3://{bucket}/", endpoint=endpoint, create_bucket=True)
    payload = os.urandom(object_size)
    keys = [f"obj/{i:05d}" for i in range(count)]

    def put(key: str, data: bytes) -> None:
        with fs.open(key, "wb") as f:
            f.write(data)

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(put, keys, [payload] * count))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        for i in range(member_count):
            z.writestr(f"m/{i:05d}.bin", os.urandom(member_size))
    put("data.zip", buffer.getvalue())
    where = _member_ranges(buffer.getvalue())
    members = random.Random(0).choices(sorted(where), k=reads)
    put("big", os.urandom(big_size))
    return Data(bucket, keys, object_size, "data.zip", members, [where[m] for m in members],
                "big", big_size)


def _program(client: str, endpoint: str, data: Data) -> str:
    settings = f"""
        BUCKET, ENDPOINT = {data.bucket!r}, {endpoint!r}
        ZIP, BIG = {data.zip_key!r}, {data.big_key!r}
        THREADS, CHUNK, MIB, SEQUENTIAL_READS = {THREADS}, {8 * MIB}, {MIB}, 3
        KEYS, NAMES, RANGES = {data.keys!r}, {data.members!r}, {data.ranges!r}
        OBJECT_BYTES = {len(data.keys) * data.object_size}
        RANGE_BYTES = {sum(length for _, length in data.ranges)}
        BIG_BYTES = {data.big_size}
    """
    parts = (settings, CLIENTS[client], DRIVER)
    return "\n".join(textwrap.dedent(part).strip("\n") for part in parts) + "\n"


def measure(endpoint: str, credentials: dict[str, str], data: Data,
            turns: int) -> dict[str, dict]:
    """Each client's best figures over ``turns`` interleaved turns."""
    best: dict[str, dict] = {}
    for _ in range(turns):
        for client in CLIENTS:
            if client.startswith("pfio"):  # this checkout's pfio, with this interpreter
                pythonpath = os.pathsep.join(filter(None, [str(ROOT),
                                                           os.environ.get("PYTHONPATH")]))
                found = run_script(Path(sys.executable), _program(client, endpoint, data),
                                   {**credentials, "PYTHONPATH": pythonpath},
                                   keep_pythonpath=True, label=client)
            else:
                found = run_in_baseline(client, _program(client, endpoint, data), credentials)
            if client not in best:
                best[client] = found
                continue
            kept = best[client]
            for workload in ("objects", "ranges"):
                kept[workload] = {key: (max if key == "rate" else min)(kept[workload][key],
                                                                      found[workload][key])
                                  for key in ("rate", "cpu_ms")}
            kept["sequential"] = max(kept["sequential"], found["sequential"])
    return best


#: (baseline, target) per workload; a baseline without a target is for information
TARGETS = {
    "objects": [("s3torchconnectorclient", 1.2), ("obstore", 0.9), ("boto3", None)],
    "ranges": [("s3torchconnectorclient", 1.0), ("obstore", 0.85), ("boto3", None)],
    "sequential": [("obstore", 0.95), ("s3torchconnectorclient", None), ("boto3", None)],
}
#: the budget of pfio's client CPU per 100 KiB GET, in ms
CPU_BUDGET_MS = 0.25


def rows(figures: dict[str, dict], data: Data, server: str) -> list[Row]:
    """The result rows of :func:`measure`'s figures."""
    engine = os.environ.get("PFIO_S3_ENGINE")
    server += f", PFIO_S3_ENGINE={engine}" if engine else ""
    pfio_ = figures["pfio"]
    metrics = {
        "objects": (f"{len(data.keys):,} objects of 100 KiB, {THREADS} threads ({server})",
                    "objects/s"),
        "ranges": (f"{len(data.members):,} random 64 KiB ranges (pfio: zip members), "
                   f"{THREADS} threads ({server})", "reads/s"),
        "sequential": (f"sequential read, {data.big_size // MIB} MiB object ({server})", "MB/s"),
    }
    found: list[Row] = []
    for workload, baselines in TARGETS.items():
        metric, unit = metrics[workload]
        for name, target in baselines:
            ours, theirs = pfio_[workload], figures[name][workload]
            if workload != "sequential":
                ours, theirs = ours["rate"], theirs["rate"]
            found.append(Row("s3", metric, ours, figures[name]["version"], theirs, target,
                             unit=unit))
    cpu = f"client CPU per 100 KiB GET ({server})"
    ours = pfio_["objects"]["cpu_ms"]
    found.append(Row("s3", cpu, ours, "budget", CPU_BUDGET_MS, 1.0, higher_is_better=False,
                     unit="ms"))
    found += [Row("s3", cpu, ours, figures[name]["version"], figures[name]["objects"]["cpu_ms"],
                  None, higher_is_better=False, unit="ms") for name in CLIENTS if name != "pfio"]
    return found
