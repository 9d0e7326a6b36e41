"""What the tracer costs (issue 6).

1. ``open`` + ``read`` + ``close`` of 4 KiB local files through pfio: the time per file with
   tracing at the ``metrics`` level (target <= 1.10x) and at the ``spans`` level (target
   <= 1.20x, issue 37), against the same with tracing disabled. The three are measured in
   interleaved rounds, each level's turn coming first, second and third in turn, and the
   best round of each is kept, so that load from other processes hits them alike; the time
   is the CPU time of the benchmark's thread (user and system). A round is 4,096 files (the
   same 256 files, 16 times), so that each traced round also pays, once, for what the
   tracer does every 4,096 calls (folding the durations into the histograms), and keeps
   4,096 spans, as a long run does.
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
from pfio.trace.stats import RAW_LIMIT  # noqa: E402

FILE_SIZE = 4096
FILES = 256
PASSES = RAW_LIMIT // FILES  # a round opens and reads as many files as the tracer keeps raw
LEVELS = ("off", "metrics", "spans")


def _read_all(fs: Local, names: list[str]) -> float:
    """CPU seconds (of this thread: time while other processes run is not counted) per
    file of open + read + close over ``names``, ``PASSES`` times."""
    start = time.thread_time()
    for _ in range(PASSES):
        for name in names:
            with fs.open(name, "rb") as f:
                f.read()
    return (time.thread_time() - start) / (len(names) * PASSES)


def _round(fs: Local, names: list[str], level: str) -> float:
    """One round of ``level`` ("off" or a detail level), from a fresh recorder."""
    trace.disable()
    trace.reset()
    if level != "off":
        trace.enable(level)
    try:
        return _read_all(fs, names)
    finally:
        trace.disable()


def _file_rows(quick: bool) -> list[Row]:
    rounds = 6 if quick else 21
    with tempfile.TemporaryDirectory() as workdir:
        names = [f"f{i:04d}.bin" for i in range(FILES)]
        payload = os.urandom(FILE_SIZE)
        for name in names:
            with open(os.path.join(workdir, name), "wb") as f:
                f.write(payload)
        fs = Local(workdir)
        for level in LEVELS:  # warm the page cache, and each level's code
            _round(fs, names, level)
        best = dict.fromkeys(LEVELS, float("inf"))
        for i in range(rounds):
            order = LEVELS[i % 3:] + LEVELS[:i % 3]  # no level always first
            for level in order:
                best[level] = min(best[level], _round(fs, names, level))
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
