"""One process of the object cache stress test (``test_stress.py``): ``python stress_worker.py
ROLE CONFIG_JSON``. Roles:

* ``read``: reads the stable objects through ``CachedFS`` (whole files and block files, whole
  and in ranges) and checks every byte;
* ``evict``: evicts the cache down to a quarter of its limit (entries in use stay) after each
  of its reads;
* ``write``: writes objects through ``CachedFS`` to S3 and files to a local directory, logs
  each one once its writer has closed, and reads it back through the cache. Halfway through
  each write it says so in ``<results>/phase.<pid>`` and pauses a moment: the test kills it
  there with SIGKILL now and then.

Every object is self-describing (:func:`blob`), so whoever reads it can tell a whole object
from a torn one. Workers run until the file ``config["stop"]`` appears (or, should the test
be gone, until ``config["deadline"]``); a reader then reads each small stable object once
more, and every worker writes what it saw to ``<results>/<role>.<pid>.json.report``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback
from typing import Any

#: stable objects: name -> size (small ones are cached whole, large ones in blocks)
STABLE = {**{f"stable/small{i}": 20_000 + 37_000 * i for i in range(8)},
          **{f"stable/large{i}": (3 << 20) + 4321 * i for i in range(3)}}
WHOLE_FILE_LIMIT = 1 << 20
BLOCK_SIZE = 256 << 10
MPU_CHUNKSIZE = 5 << 20
#: keys the writers rewrite, again and again
WRITTEN_KEYS = [f"written/w{i}" for i in range(4)]
#: where a writer says what it is halfway through writing
PHASE_FILE = ""


def blob(name: str, version: str, size: int) -> bytes:
    """The bytes of version ``version`` of the object ``name``: a header naming them, then
    ``size`` pseudo-random bytes that only that name and version give."""
    head = f"{name} {version} {size}\n".encode()
    return head + random.Random(f"{name}/{version}").randbytes(size)


def check_blob(data: bytes) -> tuple[str, str]:
    """The ``(name, version)`` of a whole object; raises ``ValueError`` for anything else."""
    head, _, body = data.partition(b"\n")
    try:
        name, version, size = head.decode().split(" ")
    except ValueError:
        raise ValueError(f"not an object of the stress test: {data[:60]!r}") from None
    if blob(name, version, int(size)) != data:
        raise ValueError(f"{name} {version}: {len(body)} bytes, not the {size} written")
    return name, version


def filesystems(config: dict[str, Any]) -> tuple[Any, Any]:
    """The ``CachedFS`` over S3 (through the fault proxy) and the local scratch directory."""
    from pfio.cache import CachedFS, ObjectCache
    from pfio.fs.local import Local
    from pfio.fs.s3 import S3

    s3 = S3(config["bucket"], endpoint=config["endpoint"], max_attempts=10,
            mpu_chunksize=MPU_CHUNKSIZE)
    cache = ObjectCache(config["cache"], max_bytes=config["max_bytes"], validate="never")
    return (CachedFS(s3, cache, whole_file_limit=WHOLE_FILE_LIMIT, block_size=BLOCK_SIZE),
            Local(config["scratch"]))


def read_stable(fs: Any, rng: random.Random, report: dict[str, Any],
                name: str | None = None) -> None:
    """Read one stable object (``name``, or one at random), whole or a range of it, and
    compare every byte."""
    name = name or rng.choice(sorted(STABLE))
    expected = blob(name, "stable", STABLE[name])
    with fs.open(name, "rb") as f:
        if rng.random() < 0.5:
            got, start = f.read(), 0
        else:
            start = rng.randrange(len(expected))
            f.seek(start)
            got = f.read(rng.randrange(1, 600_000))
    report["reads"] += 1
    report["bytes"] += len(got)
    if got != expected[start:start + len(got)] or (start == 0 and len(got) != len(expected)):
        report["mismatches"].append(f"{name} at {start}: {len(got)} bytes differ")


def say(phase: str) -> None:
    """Write ``phase`` to the phase file (atomically)."""
    with open(PHASE_FILE + ".tmp", "w") as marker:
        marker.write(phase)
    os.replace(PHASE_FILE + ".tmp", PHASE_FILE)


def write_in_pieces(f: Any, data: bytes, piece: int, phase: str) -> None:
    """Write ``data`` to ``f``; halfway, say ``phase`` and pause (a kill may come then)."""
    for at in range(0, len(data), piece):
        if at <= len(data) // 2 < at + piece:
            say(phase)
            time.sleep(0.1)
            say("")
        f.write(data[at:at + piece])


def write_one(fs: Any, local: Any, rng: random.Random, serial: int,
              report: dict[str, Any]) -> None:
    """Write one S3 object and one local file in pieces, log them once closed, read the
    object back through the cache."""
    version = f"{os.getpid()}-{serial}"
    key = rng.choice(WRITTEN_KEYS)
    data = blob(key, version, rng.randrange(1 << 20, 7 << 20))
    with fs.open(key, "wb") as f:
        write_in_pieces(f, data, 256 << 10, "s3")
    local_name = f"l{rng.randrange(4)}"
    local_data = blob(local_name, version, 1 << 20)
    with local.open(local_name, "wb") as f:
        write_in_pieces(f, local_data, 64 << 10, "local")
    with open(report["log"], "a") as log:
        log.write(f"{key} {version}\n{local_name} {version}\n")
    with fs.open(key, "rb") as f:  # the cache forgot the old version when this one was published
        if f.read() != data:
            report["mismatches"].append(f"{key} {version}: read back something else")
    report["writes"] += 1


def run(role: str, config: dict[str, Any]) -> dict[str, Any]:
    global PHASE_FILE
    from pfio.cache import ObjectCache

    PHASE_FILE = os.path.join(config["results"], f"phase.{os.getpid()}")
    fs, local = filesystems(config)
    rng = random.Random(os.getpid())
    report: dict[str, Any] = {"role": role, "reads": 0, "bytes": 0, "writes": 0,
                              "evictions": 0, "mismatches": [], "errors": [],
                              "log": config["log"]}
    evicting = ObjectCache(config["cache"], max_bytes=config["max_bytes"]) \
        if role == "evict" else None
    serial = 0
    while not os.path.exists(config["stop"]) and time.time() < config["deadline"]:
        try:
            if role == "write":
                serial += 1
                write_one(fs, local, rng, serial, report)
            else:
                read_stable(fs, rng, report)
                if evicting is not None:
                    evicting.evict(config["max_bytes"] // 4)
                    report["evictions"] += 1
        except Exception:
            report["errors"].append(traceback.format_exc(limit=6))
    return report


def main() -> None:
    role, config = sys.argv[1], json.loads(sys.argv[2])
    report = run(role, config)
    path = os.path.join(config["results"], f"{role}.{os.getpid()}.json.report")
    with open(path + ".tmp", "w") as f:
        json.dump(report, f)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
