"""Training input at fleet scale (issue 36), on a Ceph RADOS Gateway on loopback.

A dataset of tar shards written by ``ShardWriter`` (with its ``pfio-index.json``): 3,072
samples of 110 KB in 128 shards (768 in 64 with ``--quick``). 64 simulated ranks (16 with
``--quick``), each a process of its own with rank and world size given explicitly and a
DataLoader of 2 workers (batch 16, IO only: the sample's bytes are counted, not decoded),
read one epoch through a counting proxy (``pfio.testing.faultproxy``) in front of the
gateway. The machine has 2 cores shared with other work, so ranks run ``CONCURRENT`` at a
time; the rates are per rank, and the fleet's peak request rate is extrapolated to every
rank reading at once at the measured per-rank rate.

Printed:
- requests per rank at startup (making the dataset): target 1, the index's GET;
- GETs per epoch against the samples (and against today's shard-level placement);
- resuming after the world size changes 64 -> 48 (``state_dict(samples_seen)`` half-way):
  seconds from making the dataset to its first batch, against a fresh start;
- the epoch's peak GET rate with all ranks at once, against S3's 5,500 GET/s per prefix;
- speed on one rank (2 workers, IO only, 3 interleaved rounds, best kept):
  ``PfioWebDataset`` over the index >= 1.0x the shard-level placement's samples/s at
  <= 1.05x its client CPU per sample.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, ceph_endpoint, main, s3_server  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PAYLOAD = 110_000
BATCH = 16
CONCURRENT = 4
S3_GET_LIMIT = 5500.0

RANK = """
import json, sys, time
import pfio, torch
from pfio.integrations.torch import PfioWebDataset
url, rank, world, state = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
fs = pfio.from_url(url)
log = []
fs.connection.add_request_hook(lambda method, path, headers: log.append(method))
start = time.perf_counter()
dataset = PfioWebDataset(url, rank=rank, world_size=world, batch_size=__BATCH__,
                         transform=lambda s: (s["__key__"], len(s["bin"])))
if state != "-":
    dataset.load_state_dict(json.load(open(state)))
startup = len(log)
loader = torch.utils.data.DataLoader(dataset, batch_size=__BATCH__, num_workers=2)
keys, first = [], None
for names, sizes in loader:
    if first is None:
        first = time.perf_counter() - start
    keys += names
seconds = time.perf_counter() - start
print(json.dumps({"startup": startup, "first": first, "seconds": seconds, "keys": keys}))
""".replace("__BATCH__", str(BATCH))

SPEED = """
import sys
sys.path.insert(0, __HERE__)
from training_epoch import report, run_epoch
from pfio.integrations.shards import read_index
from pfio.integrations.torch import PfioWebDataset
url, mode = sys.argv[1], sys.argv[2]
io = lambda s: (len(s["bin"]), 0)
if mode == "index":
    dataset = PfioWebDataset(url, transform=io, batch_size=64)
else:
    dataset = PfioWebDataset([e.url for e in read_index(url).shards], transform=io)
report(run_epoch(dataset, workers=2))
""".replace("__HERE__", repr(str(HERE)))


def _write(url: str, samples: int, shards: int) -> None:
    from pfio.integrations.shards import ShardWriter

    payload = os.urandom(PAYLOAD)
    with ShardWriter(url + "/train-%05d.tar", maxcount=samples // shards) as sink:
        for i in range(samples):
            sink.write({"__key__": f"{i:06d}", "bin": payload, "cls": i % 10})


def _ranks(script: str, url: str, world: int, env: dict[str, str],
           state: str = "-") -> list[dict[str, Any]]:
    """Run every rank of ``world`` (``CONCURRENT`` at a time); their JSON results."""
    out: list[dict[str, Any]] = []
    for first in range(0, world, CONCURRENT):
        procs = [subprocess.Popen([sys.executable, script, url, str(rank), str(world), state],
                                  stdout=subprocess.PIPE, env=env, text=True)
                 for rank in range(first, min(first + CONCURRENT, world))]
        for proc in procs:
            stdout, _ = proc.communicate(timeout=900)
            if proc.returncode:
                raise RuntimeError(f"a rank failed ({proc.returncode})")
            out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def _peak(times: list[float]) -> float:
    """The most events in any one-second window."""
    times.sort()
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] > 1.0:
            lo += 1
        best = max(best, hi - lo + 1)
    return float(best)


def _speed(url: str, env: dict[str, str], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Samples/s and CPU ms per sample of each mode, round after round (interleaved)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(SPEED)
    found: dict[str, dict[str, list[float]]] = {m: {"rate": [], "cpu_ms": []}
                                                for m in ("index", "shards")}
    try:
        for _ in range(rounds):
            for mode in found:
                done = subprocess.run([sys.executable, f.name, url, mode], env=env, text=True,
                                      capture_output=True, check=True, timeout=900)
                got = json.loads(done.stdout.strip().splitlines()[-1])
                found[mode]["rate"].append(got["rate"])
                found[mode]["cpu_ms"].append(got["cpu_ms"])
    finally:
        os.unlink(f.name)
    return found


def run(quick: bool) -> list[Row]:
    if ceph_endpoint() is None:
        print("bench_fleet needs the Ceph RADOS Gateway (/tmp/pfio-ceph/env): no rows",
              file=sys.stderr)
        return []
    from pfio.integrations.torch import PfioWebDataset
    from pfio.testing.faultproxy import FaultProxy

    samples, shards, world = (768, 64, 16) if quick else (3072, 128, 64)
    resumed_world = world * 3 // 4
    with s3_server("bench-fleet") as (_, bucket, settings), \
            tempfile.TemporaryDirectory() as tmp:
        url = f"s3://{bucket}/fleet"
        _write(url, samples, shards)
        script = os.path.join(tmp, "rank.py")
        Path(script).write_text(RANK)
        endpoint = urlsplit(settings["S3_ENDPOINT"])
        base_env = {**os.environ, **settings, "PYTHONPATH": str(ROOT)}
        speed = _speed(url, base_env, 1 if quick else 3)
        with FaultProxy(endpoint.hostname, endpoint.port) as proxy:
            times: list[float] = []
            proxy.rewrite_next(10**9, lambda answer: times.append(time.monotonic()))
            env = {**base_env, "S3_ENDPOINT": proxy.endpoint}
            epoch = _ranks(script, url, world, env)
            gets = proxy.methods["GET"]
            # half an epoch seen by the first world, then resumed on 3/4 of it
            seen = (samples // world // 2 // BATCH) * BATCH * world
            state = PfioWebDataset(url, rank=0, world_size=world, batch_size=BATCH
                                   ).state_dict(seen)
            state_path = os.path.join(tmp, "state.json")
            Path(state_path).write_text(json.dumps(state))
            resumed = _ranks(script, url, resumed_world, env, state_path)
    keys = [k for r in epoch for k in r["keys"]]
    assert sorted(set(keys)) == [f"{i:06d}" for i in range(samples)], "an epoch lost samples"
    after = {k for r in resumed for k in r["keys"]}
    assert len(after) >= samples - seen, "the resumed epoch lost samples"
    per_rank_seconds = sum(r["seconds"] for r in epoch) / len(epoch)
    peak_all = gets / per_rank_seconds  # every rank at once, at the measured per-rank pace
    startup = max(r["startup"] for r in epoch)
    fresh = sum(r["first"] for r in epoch) / len(epoch)
    resume = sum(r["first"] for r in resumed) / len(resumed)
    name = f"fleet, {world} ranks x 2 workers"
    rows = [
        Row(name, "requests per rank at startup (max)", startup, "one GET", 1.0, 1.0, False),
        Row(name, "GETs per epoch / samples", gets, "samples", samples, None, False),
        Row(name, "GETs per epoch / shards", gets, "shard-level: 1 GET per shard", shards,
            None, False),
        Row(name, f"resume {world}->{resumed_world}: s to first batch (mean)", resume,
            "fresh start (mean)", fresh, 1.5, False, "s"),
        Row(name, f"resume {world}->{resumed_world}: s to first batch (slowest rank)",
            max(r["first"] for r in resumed), "fresh start (slowest rank)",
            max(r["first"] for r in epoch), None, False, "s"),
        Row(name, "peak GET/s, all ranks at once (extrapolated)", peak_all,
            "S3 per-prefix limit", S3_GET_LIMIT, 1.0, False, "GET/s"),
        Row(name, f"peak GET/s measured ({CONCURRENT} ranks at once)", _peak(times),
            "S3 per-prefix limit", S3_GET_LIMIT, None, False, "GET/s"),
        Row("index vs shard-level, 1 rank [IO]", "samples/s (best round)",
            max(speed["index"]["rate"]), "shard-level placement", max(speed["shards"]["rate"]),
            1.0, True, "samples/s"),
        Row("index vs shard-level, 1 rank [IO]", "client CPU per sample (best round)",
            min(speed["index"]["cpu_ms"]), "shard-level placement",
            min(speed["shards"]["cpu_ms"]), 1.05, False, "ms"),
    ]
    print("speed rounds:", {m: {k: [round(x, 3) for x in v] for k, v in d.items()}
                            for m, d in speed.items()}, file=sys.stderr)
    return rows


if __name__ == "__main__":
    main(run)
