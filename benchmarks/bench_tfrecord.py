"""Reading TFRecord files on a local disk: pfio against TensorFlow (issue 27).

A file of 2,000 records of 100 KiB (300 with ``--quick``), in the page cache, read to the
end; records/s, the best of several passes (the spread of the passes is printed below the
table):

1. ``pfio.integrations.tfrecord.iter_records`` (every CRC checked, each record a ``bytes``)
   against ``tf.data.TFRecordDataset`` iterated in Python with ``.numpy()`` on each record
   (the records reach Python as ``bytes`` on both sides): target >= 0.9x.
2. For information: the same against TensorFlow's iteration without ``.numpy()`` (a tensor
   per record), and against ``dataset.reduce`` (counted inside TensorFlow's runtime, no
   record reaches Python), with the default read buffer and with 8 MiB; pfio with
   ``verify=False`` against ``verify=True``; the masked CRC-32C of one 100 KiB record
   against ``zlib.crc32``.

TensorFlow runs in a process of its own (``tensorflow-cpu``, the ``test`` extra); without it
its rows are left out.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, main, run_script  # noqa: E402

from pfio.integrations.tfrecord import TFRecordWriter, iter_records, masked_crc  # noqa: E402

RECORD = 100 << 10

TF_CODE = """
import json, os, time
import tensorflow as tf

path = os.environ["BENCH_TFRECORD_PATH"]
repeat = int(os.environ["BENCH_TFRECORD_REPEAT"])

def passes(fn):
    fn()  # warm-up
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        count = fn()
        out.append(time.perf_counter() - start)
    return count, out

def numpy():
    n = 0
    for record in tf.data.TFRecordDataset(path):
        record.numpy()
        n += 1
    return n

def tensors():
    return sum(1 for _ in tf.data.TFRecordDataset(path))

def in_graph(buffer_size=None):
    ds = tf.data.TFRecordDataset(path, buffer_size=buffer_size)
    return int(ds.reduce(tf.constant(0, tf.int64), lambda n, _: n + 1).numpy())

print(json.dumps({name: passes(fn) for name, fn in
                  (("numpy", numpy), ("tensors", tensors), ("graph", in_graph),
                   ("graph_8m", lambda: in_graph(8 << 20)))}))
"""


def _passes(fn, repeat: int) -> tuple[int, list[float]]:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - start)
    return count, times


def _rate(count: int, times: list[float]) -> float:
    return count / min(times)


def _spread(name: str, count: int, times: list[float]) -> str:
    rates = sorted(count / t for t in times)
    return (f"{name}: best {rates[-1]:,.0f}, median {statistics.median(rates):,.0f}, "
            f"worst {rates[0]:,.0f} records/s over {len(times)} passes")


def _tensorflow(path: str, repeat: int) -> dict | None:
    if importlib.util.find_spec("tensorflow") is None:
        return None
    env = {"TF_CPP_MIN_LOG_LEVEL": "2", "BENCH_TFRECORD_PATH": path,
           "BENCH_TFRECORD_REPEAT": str(repeat)}
    return run_script(Path(sys.executable), TF_CODE, env=env,
                      keep_pythonpath=True, label="TensorFlow", timeout=1200)


def _crc_row() -> Row:
    data = os.urandom(RECORD)
    loops = 2000

    def per_call(fn) -> float:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(loops):
                fn(data)
            best = min(best, (time.perf_counter() - start) / loops)
        return best * 1e6

    return Row("tfrecord", "masked CRC-32C of a 100 KiB record", per_call(masked_crc),
               "zlib.crc32 (CRC-32)", per_call(zlib.crc32), None, higher_is_better=False,
               unit="us")


def run(quick: bool) -> list[Row]:
    count = 300 if quick else 2000
    repeat = 3 if quick else 7
    spreads = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.tfrecord")
        block = os.urandom(RECORD)
        with TFRecordWriter(path) as writer:
            for i in range(count):
                writer.write(block[i % 256:] + block[:i % 256])

        def ours(verify: bool = True) -> int:
            n = 0
            for _ in iter_records(path, verify=verify):
                n += 1
            return n

        verified = _passes(ours, repeat)
        unverified = _passes(lambda: ours(False), repeat)
        spreads += [_spread("pfio iter_records", *verified),
                    _spread("pfio iter_records(verify=False)", *unverified)]
        assert verified[0] == unverified[0] == count
        theirs = _tensorflow(path, repeat)
    rows = []
    if theirs is not None:
        labels = {"numpy": "tf.data.TFRecordDataset + .numpy()",
                  "tensors": "tf.data.TFRecordDataset (tensors)",
                  "graph": "tf.data.TFRecordDataset.reduce (in graph)",
                  "graph_8m": "the same, buffer_size=8 MiB"}
        for key, label in labels.items():
            n, times = theirs[key]
            assert n == count, (key, n)
            spreads.append(_spread(label, n, times))
            rows.append(Row(
                "tfrecord", "local read, 100 KiB records" + ("" if key == "numpy" else " (info)"),
                _rate(*verified), label, _rate(n, times), 0.9 if key == "numpy" else None,
                unit="rec/s"))
    else:
        print("tensorflow is not installed: its rows are left out", file=sys.stderr)
    rows.append(Row("tfrecord", "local read, CRCs on vs off (info)", _rate(*verified),
                    "pfio verify=False", _rate(*unverified), None, unit="rec/s"))
    rows.append(_crc_row())
    print("\n".join(spreads))
    return rows


if __name__ == "__main__":
    main(run)
