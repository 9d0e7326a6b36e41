"""The checkpoint benchmark's fairness (``benchmarks/bench_checkpoints.py``): the clients'
order rotates every round, the gateway's garbage is collected before every save, the
objects of a round go before the next, and the CPU time of watched processes is counted
inside the timed blocks only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

pytest.importorskip("torch")
import bench_checkpoints as bench  # noqa: E402 - a script's module, beside it


def _groups(log: list[str]) -> bench.Groups:
    def op(name: str) -> bench.Op:
        def timed() -> None:
            with bench.CLOCK:  # (what a real operation times)
                log.append(name)
        return timed
    return {"g": {c: (op(f"{c} save"), op(f"{c} load")) for c in ("a", "b", "c")}}


def test_each_round_rotates_the_order_and_collects_garbage_before_each_save(monkeypatch):
    monkeypatch.setattr(bench, "OPS", [])
    log: list[str] = []
    found = bench.measure(_groups(log), 3, 1.0, lambda: log.append("clean"),
                          lambda: log.append("gc"))
    saves = [entry for entry in log if entry != "gc" and entry.endswith("save")]
    assert saves[:3] == ["a save", "b save", "c save"]
    assert saves[3:6] == ["b save", "c save", "a save"]
    assert saves[6:] == ["c save", "a save", "b save"]
    assert all(log[log.index(s) - 1] == "gc" for s in ("a save", "b save", "c save"))
    assert log.count("gc") == 9
    # the objects of a round go before the next round, and after the group
    assert [i for i, entry in enumerate(log) if entry == "clean"] == [9, 19, 29]
    assert len(found[("g", "a", "save")]) == 3 and len(found[("g", "a", "load")]) == 3


def test_only_the_operations_asked_for_are_measured(monkeypatch):
    monkeypatch.setattr(bench, "OPS", ["save"])
    log: list[str] = []
    found = bench.measure(_groups(log), 1, 1.0)
    assert log == ["a save", "b save", "c save"]
    assert {what for _, _, what in found} == {"save"}


def test_the_clock_counts_a_watched_process_cpu_inside_its_blocks_only():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        clock = bench.Clock()
        clock.watched = {"busy": [busy.pid]}
        clock.reset()
        before = bench._cpu_seconds(busy.pid)
        with clock:
            while bench._cpu_seconds(busy.pid) < before + 0.05:
                os.sched_yield()
        assert clock.others["busy"] >= 0.05
        assert clock.others["busy"] <= bench._cpu_seconds(busy.pid) - before
    finally:
        busy.kill()
        busy.wait()
    assert bench._cpu_seconds(busy.pid) == 0.0  # gone: nothing to count
