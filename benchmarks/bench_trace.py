"""What the tracer costs (issue 6).

1. ``open`` + ``read`` + ``close`` of 4 KiB local files through pfio: the time per file with
   tracing at the ``metrics`` level (target <= 1.10x) and at the ``spans`` level (target
   <= 1.20x, issue 37), against the same with tracing disabled. The three are measured in
   interleaved rounds and the best round of each is kept, so that load from other processes
   hits them alike; the time is the CPU time of the benchmark's thread (user and system).
2. The hook as backends call it while tracing is disabled
   (``if hook.ENABLED: hook.record_request(...)``), timed alone: target <= 0.3 us per call.
   Filesystem calls have no hook at all while tracing is off (the tracer wraps FS methods
   when it is enabled and removes the wrappers when it is disabled).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, main  # noqa: E402

from pfio import trace  # noqa: E402
from pfio.fs.local import Local  # noqa: E402
from pfio.trace import hook  # noqa: E402

FILE_SIZE = 4096
FILES = 200


def _read_all(fs: Local, names: list[str]) -> float:
    """CPU seconds (of this thread: time while other processes run is not counted) per
    file of open + read + close over ``names``."""
    start = time.thread_time()
    for name in names:
        with fs.open(name, "rb") as f:
            f.read()
    return (time.thread_time() - start) / len(names)


def _file_rows(quick: bool) -> list[Row]:
    rounds = 15 if quick else 60
    with tempfile.TemporaryDirectory() as workdir:
        names = [f"f{i:04d}.bin" for i in range(FILES)]
        payload = os.urandom(FILE_SIZE)
        for name in names:
            with open(os.path.join(workdir, name), "wb") as f:
                f.write(payload)
        fs = Local(workdir)
        best = {"off": float("inf"), "metrics": float("inf"), "spans": float("inf")}
        _read_all(fs, names)  # warm the page cache
        for _ in range(rounds):
            for level in best:
                trace.disable()
                trace.reset()
                if level != "off":
                    trace.enable(level)
                best[level] = min(best[level], _read_all(fs, names))
                trace.disable()
        trace.reset()
    off_us = best["off"] * 1e6
    return [
        Row("trace", "open+read+close 4 KiB, metrics level (us/file)", best["metrics"] * 1e6,
            "tracing disabled", off_us, 1.10, higher_is_better=False, unit="us"),
        Row("trace", "open+read+close 4 KiB, spans level (us/file)", best["spans"] * 1e6,
            "tracing disabled", off_us, 1.20, higher_is_better=False, unit="us"),
    ]


def _hook_row(quick: bool) -> Row:
    number = 200_000 if quick else 1_000_000
    assert not hook.ENABLED
    stmt = ("if hook.ENABLED:\n"
            "    hook.record_request('s3', 'GET', status=200, nbytes=4096, seconds=1e-3)")
    per_call = min(timeit.repeat(stmt, globals={"hook": hook}, number=number, repeat=5))
    return Row("trace", "disabled hook alone (ns/call)", per_call / number * 1e9,
               "budget", 300.0, 1.0, higher_is_better=False, unit="ns")


def run(quick: bool) -> list[Row]:
    """The tracer's overhead rows."""
    return [*_file_rows(quick), _hook_row(quick)]


if __name__ == "__main__":
    main(run)
