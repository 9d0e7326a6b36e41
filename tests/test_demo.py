"""The demo: end to end at a tiny size against the test S3 server, and its parts."""

import json
import logging
import os
import subprocess
import sys

import boto3
import pytest
import torch

from pfio.demo import options as demo_options
from pfio.demo.loader import epoch_order, loader_state, make_loader
from pfio.demo.options import Options
from pfio.demo.progress import EpochProgress
from pfio.demo.run import fresh_output
from pfio.demo.tracing import EpochTraces
from pfio.trace import env as trace_env

#: 200 images, 16 a batch: 13 batches, the last of 8 images
DEMO_ARGS = ["--images", "200", "--epochs", "1", "--workers", "2", "--batch-size", "16",
             "--checkpoint-every", "2", "--progress-every", "0"]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory, moto_server):
    """One run of ``pfio demo`` against the moto server: (bucket, output folder, stdout,
    stderr)."""
    creds = moto_server.credentials
    bucket = "pfio-demo-test"
    client = boto3.client("s3", endpoint_url=moto_server.endpoint,
                          region_name=creds["AWS_DEFAULT_REGION"],
                          aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])
    client.create_bucket(Bucket=bucket)
    out = tmp_path_factory.mktemp("demo") / "out"
    env = {**os.environ, **creds, "S3_ENDPOINT": moto_server.endpoint}
    env.pop("AWS_ENDPOINT_URL", None)
    result = subprocess.run(
        [sys.executable, "-m", "pfio", "demo", "--url", f"s3://{bucket}/demo", *DEMO_ARGS,
         "--out", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix="demo/")["Contents"]]
    return keys, out, result.stdout, result.stderr


def test_demo_crashes_and_resumes_from_the_checkpoint(demo_run):
    _, _, _, stderr = demo_run
    assert "simulated crash in epoch 1 at batch 6" in stderr
    assert "resumed at step 6 (epoch 1, batch 6), the loader from its saved state" in stderr


def test_demo_resumed_epoch_trains_on_exactly_the_rest(demo_run):
    _, out, stdout, _ = demo_run
    (epoch,) = json.loads((out / "summary.json").read_text())
    assert epoch["resumed_after"] == 6 * 16
    assert epoch["resumed_after"] + epoch["images"] == 200  # one epoch, nothing twice
    assert "the checkpoint had trained on 96 images of epoch 1, this run on the other 104" \
        in stdout


def test_demo_logs_progress_with_images_per_second(demo_run):
    _, _, _, stderr = demo_run
    lines = [line for line in stderr.splitlines() if line.startswith("epoch 1/1  batch ")]
    assert lines[-1].startswith("epoch 1/1  batch 13/13  ")
    assert all(" images/s  " in line and "s waiting for data" in line for line in lines)


def test_demo_prints_a_summary(demo_run):
    _, out, stdout, _ = demo_run
    table = stdout[stdout.index("epoch  images  images/s  waiting for data"):]
    row = table.splitlines()[1].split()
    assert row[:2] == ["1", "104*"]
    assert f"wrote {out}/trace.json" in stdout


def test_demo_keeps_checkpoints_and_metrics_on_s3(demo_run):
    keys, _, _, _ = demo_run
    checkpoints = sorted(k for k in keys if k.startswith("demo/checkpoints/ckpt-"))
    assert checkpoints[-1] == "demo/checkpoints/ckpt-000000013.pt"  # 200 images / 16 a batch
    assert len(checkpoints) == 2  # keep_last=2
    assert {"demo/train.zip", "demo/metrics.json"} <= set(keys)


def test_demo_writes_trace_chart_and_data_wait(demo_run):
    _, out, _, _ = demo_run
    trace = json.loads((out / "trace.json").read_text())
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert events and all({"name", "ts", "dur", "pid", "tid"} <= set(e) for e in events)
    assert len({e["pid"] for e in events}) >= 2  # the main process and DataLoader workers
    assert (out / "data-wait.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (epoch,) = json.loads((out / "summary.json").read_text())
    assert epoch["data_wait_seconds"] >= 0
    assert not (out / "throughput.png").exists()


# -- the parts ------------------------------------------------------------------------

class Numbers(torch.utils.data.Dataset):
    """Sample i is the number i."""

    def __len__(self) -> int:
        return 50

    def __getitem__(self, index: int) -> int:
        return index


def _samples(loader) -> list[int]:
    return [int(x) for batch in loader for x in batch]


def test_loader_resumed_from_its_state_yields_the_rest_of_the_epoch():
    pytest.importorskip("torchdata.stateful_dataloader")
    order = epoch_order(50, seed=3, epoch=1)
    loader = make_loader(Numbers(), order, batch_size=8, workers=2)
    batches = iter(loader)
    seen = [int(x) for _ in range(3) for x in next(batches)]
    state = loader_state(loader)
    del batches, loader
    rest = _samples(make_loader(Numbers(), order, batch_size=8, workers=2, state=state))
    assert seen + rest == order


def test_loader_without_a_state_skips_the_batches_done():
    order = epoch_order(50, seed=3, epoch=1)
    rest = _samples(make_loader(Numbers(), order, batch_size=8, workers=0, done_batches=3))
    assert rest == order[24:]


def test_epoch_order_is_the_same_in_every_run_and_differs_per_epoch():
    assert epoch_order(50, 0, 1) == epoch_order(50, 0, 1)
    assert epoch_order(50, 0, 1) != epoch_order(50, 0, 2)
    assert sorted(epoch_order(50, 0, 1)) == list(range(50))


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 2), (4, 4), (64, 4), (None, 1)])
def test_default_workers_at_most_one_per_core(monkeypatch, cores, workers):
    monkeypatch.setattr(demo_options.os, "cpu_count", lambda: cores)
    assert Options().workers == workers


def test_progress_lines_say_images_per_second_and_data_wait(caplog):
    now = [0.0]
    progress = EpochProgress(2, 3, batches=10, first_batch=4, every=1.0, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="pfio.demo"):
        for _ in range(4):
            progress.waited(0.25)
            now[0] += 0.5
            progress.trained(16, 8, 1.5)
    assert caplog.messages == [
        "epoch 2/3  batch 6/10  32 images/s  0.5 s waiting for data  loss 1.500",
        "epoch 2/3  batch 8/10  32 images/s  1.0 s waiting for data  loss 1.500"]
    assert progress.images == 64 and progress.accuracy == 0.5


def test_fresh_output_removes_what_a_run_wrote_and_nothing_else(tmp_path):
    (tmp_path / "trace-parts").mkdir()
    (tmp_path / "trace-parts" / "part.123.json").write_text("{}")
    (tmp_path / "trace.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("mine")
    fresh_output(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_epoch_traces_never_merge_an_earlier_runs_parts(tmp_path, monkeypatch):
    parts = tmp_path / "trace-parts"
    parts.mkdir()
    (parts / "part.99999.json").write_text('{"traceEvents": []}')
    monkeypatch.delenv("PFIO_TRACE", raising=False)
    monkeypatch.setattr(trace_env, "_target", None)  # this process traces for this test only
    traces = EpochTraces(str(parts))
    try:
        assert os.listdir(parts) == []
        assert traces.epoch().operations == {}
    finally:
        traces.close()
