"""The end-to-end demo at a tiny size, against the test S3 server."""

import json
import os
import subprocess
import sys

import boto3


def test_demo_trains_crashes_resumes_and_leaves_its_outputs(s3_env, s3_bucket, tmp_path):
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "pfio", "demo", "--url", f"s3://{s3_bucket}/demo",
         "--images", "200", "--epochs", "1", "--workers", "2", "--batch-size", "16",
         "--checkpoint-every", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=300, env=os.environ.copy())
    assert result.returncode == 0, result.stderr
    assert "simulated crash in epoch 1 at batch 6" in result.stdout
    assert "resumed at step 6 (epoch 1, batch 6)" in result.stdout

    keys = [o["Key"] for o in boto3.client("s3", endpoint_url=s3_env).list_objects_v2(
        Bucket=s3_bucket, Prefix="demo/")["Contents"]]
    checkpoints = sorted(k for k in keys if k.startswith("demo/checkpoints/ckpt-"))
    assert checkpoints[-1] == "demo/checkpoints/ckpt-000000013.pt"  # 200 images / 16 a batch
    assert len(checkpoints) == 2  # keep_last=2
    assert {"demo/train.zip", "demo/metrics.json"} <= set(keys)

    trace = json.loads((out / "trace.json").read_text())
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert events and all({"name", "ts", "dur", "pid", "tid"} <= set(e) for e in events)
    assert len({e["pid"] for e in events}) >= 2  # the main process and DataLoader workers
    assert (out / "throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "summary.json").read_text())
    assert summary[0]["epoch"] == 1 and summary[0]["images"] == 200 - 6 * 16
