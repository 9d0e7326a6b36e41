import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import pfio
from pfio.integrations.torch.checkpoints import CheckpointManager, load, save


class _Unpicklable:
    def __reduce__(self):
        raise RuntimeError("cannot pickle this")


@pytest.fixture
def url(request):
    return f"mem://ckpt-{request.node.name}/run"


def test_save_and_load_round_trip(url):
    state = {"w": torch.arange(6.0).reshape(2, 3), "step": 7}
    save(state, f"{url}/a.pt")
    loaded = load(f"{url}/a.pt")
    assert loaded["step"] == 7 and torch.equal(loaded["w"], state["w"])


def test_failed_save_leaves_the_previous_checkpoint(url):
    save({"v": 1}, f"{url}/model.pt")
    with pytest.raises(RuntimeError, match="cannot pickle"):
        save({"v": 2, "bad": _Unpicklable()}, f"{url}/model.pt")
    assert load(f"{url}/model.pt") == {"v": 1}


def test_manager_keeps_the_last_n(url):
    manager = CheckpointManager(url, keep_last=2)
    for step in (10, 20, 30):
        manager.save({"step": step}, step)
    assert manager.steps() == [20, 30]
    assert manager.latest_step() == 30
    assert manager.load_latest() == {"step": 30}


def test_manager_without_checkpoints(url):
    manager = CheckpointManager(url)
    assert manager.latest_step() is None
    assert manager.load_latest() is None


def test_manager_ignores_foreign_files(url):
    pfio.from_url(url, create=True)
    with pfio.open_url(f"{url}/notes.txt", "w") as f:
        f.write("not a checkpoint")
    manager = CheckpointManager(url)
    manager.save({"a": 1}, 5)
    assert manager.steps() == [5]


def test_keep_last_must_be_positive(url):
    with pytest.raises(ValueError, match="keep_last"):
        CheckpointManager(url, keep_last=0)


def test_async_save_snapshots_the_state(url):
    manager = CheckpointManager(url)
    weights = torch.zeros(4)
    manager.save({"w": weights}, 1, blocking=False)
    weights += 1  # training goes on and changes the tensor
    manager.wait()
    assert torch.equal(manager.load_latest()["w"], torch.zeros(4))


def test_async_save_error_is_raised_by_wait(url):
    manager = CheckpointManager(url)
    manager.save({"bad": _Unpicklable()}, 1, blocking=False)
    with pytest.raises(RuntimeError, match="cannot pickle"):
        manager.wait()
    assert manager.latest_step() is None


def test_local_manager_creates_its_directory(tmp_path):
    manager = CheckpointManager(str(tmp_path / "new" / "dir"))
    manager.save({"x": 1}, 3)
    assert os.listdir(tmp_path / "new" / "dir") == ["ckpt-000000003.pt"]


WRITER = """
import sys, torch
from pfio.integrations.torch.checkpoints import CheckpointManager

class Slow:
    def __reduce__(self):
        print("writing", flush=True)
        import time; time.sleep(60)
        return (int, (0,))

manager = CheckpointManager(sys.argv[1])
manager.save({"step": 1}, 1)
manager.save({"step": 2, "slow": Slow()}, 2)
"""


def test_kill_during_save_leaves_the_previous_latest(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(WRITER))
    ckpt = tmp_path / "ckpt"
    proc = subprocess.Popen([sys.executable, str(script), str(ckpt)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "writing"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    manager = CheckpointManager(str(ckpt))
    assert manager.latest_step() == 1
    assert manager.load_latest() == {"step": 1}


BACKGROUND_WRITER = """
import sys, time, torch
from pfio.integrations.torch.checkpoints import CheckpointManager

class Slow:
    def __reduce__(self):
        time.sleep(0.5)  # still saving when the main thread has finished
        return (int, (7,))

class Unpicklable:
    def __reduce__(self):
        time.sleep(0.5)
        raise RuntimeError("cannot pickle this")

manager = CheckpointManager(sys.argv[1])
last = Unpicklable() if sys.argv[2] == "fail" else Slow()
manager.save({"w": torch.arange(1_000_000.0), "last": last}, 1, blocking=False)
"""


def run_background_writer(tmp_path, how: str) -> subprocess.CompletedProcess:
    script = tmp_path / "background.py"
    script.write_text(textwrap.dedent(BACKGROUND_WRITER))
    return subprocess.run([sys.executable, str(script), str(tmp_path / "ckpt"), how],
                          capture_output=True, text=True, timeout=120)


def test_background_save_finishes_before_the_process_exits(tmp_path):
    done = run_background_writer(tmp_path, "ok")
    assert done.returncode == 0, done.stderr
    assert os.listdir(tmp_path / "ckpt") == ["ckpt-000000001.pt"]
    state = CheckpointManager(str(tmp_path / "ckpt")).load_latest(weights_only=False)
    assert state["last"] == 7 and torch.equal(state["w"], torch.arange(1_000_000.0))


def test_background_save_error_is_reported_at_exit(tmp_path):
    done = run_background_writer(tmp_path, "fail")
    assert "terminate called" not in done.stderr
    assert "background checkpoint save to" in done.stderr
    assert "cannot pickle this" in done.stderr
    assert os.listdir(tmp_path / "ckpt") == []  # no checkpoint and no temporary file


def test_local_checkpoint_is_synced_with_its_directory(tmp_path, monkeypatch):
    """Spying on os.fsync: what a power cut would lose cannot be tested honestly."""
    synced = []
    real = os.fsync

    def spy(fd):
        synced.append(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    manager = CheckpointManager(str(tmp_path))
    manager.save({"w": torch.ones(3)}, 5, blocking=False)
    manager.wait()
    assert synced == [os.stat(manager.path(5)).st_ino, os.stat(tmp_path).st_ino]


def test_a_failed_write_raises_the_storage_error_not_torchs(monkeypatch, url):
    """torch.save replaces its file's error with 'unexpected pos'; save() raises the
    storage's (here a file whose third write fails as an S3 upload would)."""
    import contextlib
    import io

    from pfio.integrations.torch import checkpoints

    class Failing(io.RawIOBase):
        writes = 0

        def writable(self):
            return True

        def write(self, b):
            Failing.writes += 1
            if Failing.writes == 3:
                raise OSError(5, "S3 error SlowDown (HTTP 503) after 10 attempts", "s3://b/k")
            return len(b)

    @contextlib.contextmanager
    def failing_open(url, mode):
        yield Failing()

    monkeypatch.setattr(checkpoints, "open_url", failing_open)
    with pytest.raises(OSError, match="SlowDown") as raised:
        save({"w": torch.zeros(1000)}, f"{url}/a.pt")
    assert "unexpected pos" not in str(raised.value)
