"""Background checkpoint saves at interpreter exit and on SIGTERM (in subprocesses, over a
moto S3 server): the save in flight is finished, or discarded and said so."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest
import torch

from pfio.integrations.torch.checkpoints import CheckpointManager

#: a 64 MiB state saved in the background, then the script ends (argv: url, then
#: "exit" to end at once or "term" to wait for SIGTERM)
SCRIPT = """
import sys, time, torch
from pfio.integrations.torch.checkpoints import CheckpointManager

manager = CheckpointManager(sys.argv[1], **eval(sys.argv[3]))
state = {"w": torch.arange(16 << 20, dtype=torch.float32)}
manager.save(state, 1, blocking=False)
print("saving", flush=True)
if sys.argv[2] == "term":
    time.sleep(600)
"""


@pytest.fixture
def run(tmp_path, s3_env, s3_bucket):
    script = tmp_path / "save.py"
    script.write_text(textwrap.dedent(SCRIPT))
    url = f"s3://{s3_bucket}/run"

    def start(how: str, **options) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(script), url, how, repr(options)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONPATH=os.getcwd()))
    start.url = url
    start.bucket = s3_bucket
    return start


def _expected() -> torch.Tensor:
    return torch.arange(16 << 20, dtype=torch.float32)


def test_a_save_in_flight_at_exit_is_finished(run):
    proc = run("exit")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "cannot schedule" not in err
    manager = CheckpointManager(run.url)
    assert manager.steps() == [1]
    assert torch.equal(manager.load_latest()["w"], _expected())


def test_sigterm_finishes_the_save_in_flight_and_says_so(run):
    proc = run("term")
    assert proc.stdout.readline().strip() == "saving"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGTERM
    assert "finished the background checkpoint save" in err, err
    manager = CheckpointManager(run.url)
    assert torch.equal(manager.load_latest()["w"], _expected())


def test_sigterm_past_the_grace_time_discards_the_save_and_says_so(run):
    proc = run("term", sigterm_grace=0)
    assert proc.stdout.readline().strip() == "saving"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGTERM
    assert "discarded the background checkpoint save" in err, err
    manager = CheckpointManager(run.url)
    assert manager.steps() == []
    assert _uploads(run.bucket) == []  # aborted


def _uploads(bucket: str) -> list:
    import boto3
    client = boto3.session.Session().client("s3", endpoint_url=os.environ["S3_ENDPOINT"])
    return client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
