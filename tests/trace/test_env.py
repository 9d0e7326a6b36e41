"""PFIO_TRACE: whole runs traced in subprocesses, parts merged."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pfio.cli.trace import expand
from pfio.trace import chrome

WORKERS = textwrap.dedent("""
    import multiprocessing as mp, sys
    import pfio

    def work(i):
        fs = pfio.from_url(f"mem://w{i}")
        with fs.open("f.bin", "wb") as f:
            f.write(b"x" * 100)
        with fs.open("f.bin", "rb") as f:
            f.read()

    if __name__ == "__main__":
        ctx = mp.get_context(sys.argv[1])
        procs = [ctx.Process(target=work, args=(i,)) for i in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        work(9)
""")

DATALOADER = textwrap.dedent("""
    import sys
    import torch
    from torch.utils.data import DataLoader, Dataset
    import pfio

    class Files(Dataset):
        def __init__(self, root):
            self.root = root
        def __len__(self):
            return 16
        def __getitem__(self, i):
            with pfio.open_url(f"{self.root}/f{i}.bin", "rb") as f:
                return torch.tensor(len(f.read()))

    if __name__ == "__main__":
        root = sys.argv[1]
        fs = pfio.from_url(root, create=True)
        for i in range(16):
            with fs.open(f"f{i}.bin", "wb") as f:
                f.write(b"y" * 64)
        loader = DataLoader(Files(root), batch_size=2, num_workers=4,
                            multiprocessing_context="fork")
        assert int(sum(b.sum() for b in loader)) == 16 * 64
""")


def run(script, tmp_path, *args, **env):
    path = tmp_path / "script.py"
    path.write_text(script)
    full_env = {**os.environ, "PFIO_TRACE": str(tmp_path / "run.json"), **env}
    subprocess.run([sys.executable, str(path), *args], check=True, env=full_env,
                   cwd=tmp_path, timeout=120)
    return sorted(tmp_path.glob("run.json.*.json"))


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_every_process_writes_its_part(tmp_path, method):
    parts = run(WORKERS, tmp_path, method)
    assert len(parts) == 3
    merged = chrome.merge(chrome.load(str(p)) for p in parts)
    metrics = chrome.metrics_of(merged)
    assert len(metrics.processes) == 3
    assert metrics.operations[("mem", "write")].count == 3  # nothing counted twice
    assert metrics.operations[("mem", "read")].bytes == 300


def test_a_dataloader_run_merges_into_one_summary_of_every_worker(tmp_path):
    parts = run(DATALOADER, tmp_path, str(tmp_path / "data"), PFIO_TRACE_DETAIL="spans")
    merged = chrome.merge(chrome.load(p) for p in expand([str(tmp_path / "run.json")]))
    metrics = chrome.metrics_of(merged)
    assert len(parts) == 5 and len(metrics.processes) == 5
    assert metrics.operations[("file", "read")].count == 16
    assert metrics.operations[("file", "read")].bytes == 16 * 64
    names = {e["args"]["name"].split(" (pid")[0] for e in merged["traceEvents"]
             if e["name"] == "process_name"}
    assert names == {"MainProcess", *(f"DataLoader worker {i}" for i in range(4))}
    tracks = {e["pid"] for e in merged["traceEvents"] if e["ph"] == "X"}
    assert len(tracks) == 5
    summary = metrics.summary()
    assert summary.startswith("pfio trace: 5 processes")


def test_the_detail_level_comes_from_the_environment(tmp_path):
    parts = run(WORKERS, tmp_path, "fork", PFIO_TRACE_DETAIL="spans")
    doc = json.loads(parts[0].read_text())
    assert doc["pfio"]["detail"] == "spans"
    assert any(e["ph"] == "X" for e in doc["traceEvents"])


def test_an_unknown_detail_level_falls_back_to_metrics(tmp_path):
    parts = run(WORKERS, tmp_path, "fork", PFIO_TRACE_DETAIL="everything")
    assert json.loads(parts[0].read_text())["pfio"]["detail"] == "metrics"


def test_without_the_variable_the_tracer_is_not_even_imported():
    code = ("import sys, pfio; from pfio.fs.local import Local; "
            "assert 'pfio.trace.control' not in sys.modules; "
            "assert not hasattr(Local.open, '__pfio_traced__')")
    env = {k: v for k, v in os.environ.items() if k != "PFIO_TRACE"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)
