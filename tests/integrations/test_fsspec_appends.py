"""Appends through the fsspec bridge where the backend cannot append (S3: the file is
rewritten whole on close), and tensorboardX's event files on ``pfio://`` URLs."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

pytest.importorskip("fsspec")

import pfio  # noqa: E402
from pfio.integrations.fsspec import PfioFileSystem  # noqa: E402


@pytest.fixture
def bridge() -> PfioFileSystem:
    return PfioFileSystem(skip_instance_cache=True)


@pytest.fixture
def s3(s3_env: str, s3_bucket: str) -> str:
    """A fresh bucket, as an fsspec path."""
    return f"pfio://s3/{s3_bucket}"


def test_text_append_keeps_what_was_there(bridge, s3):
    bridge.pipe_file(f"{s3}/log.csv", b"a,b\r\n1,2\r\n")
    with bridge.open(f"{s3}/log.csv", "a", newline="") as f:
        f.write("3,4\r\n")
    assert bridge.cat_file(f"{s3}/log.csv") == b"a,b\r\n1,2\r\n3,4\r\n"


def test_binary_append_to_a_missing_file_creates_it(bridge, s3):
    with bridge.open(f"{s3}/new.bin", "ab") as f:
        f.write(b"first")
    with bridge.open(f"{s3}/new.bin", "ab") as f:
        f.write(b"+second")
    assert bridge.cat_file(f"{s3}/new.bin") == b"first+second"


def test_an_error_while_appending_leaves_the_old_file(bridge, s3):
    bridge.pipe_file(f"{s3}/keep.txt", b"old")
    with pytest.raises(RuntimeError), bridge.open(f"{s3}/keep.txt", "a") as f:
        f.write("half")
        raise RuntimeError
    assert bridge.cat_file(f"{s3}/keep.txt") == b"old"


def test_appending_to_a_compressed_file_is_refused(bridge, s3):
    bridge.pipe_file(f"{s3}/x.csv.gz", b"")
    with pytest.raises(io.UnsupportedOperation, match="x.csv.gz.*mode 'w'"):
        bridge.open(f"{s3}/x.csv.gz", "ab", compression="infer")


def test_update_modes_stay_refused(bridge, s3):
    bridge.pipe_file(f"{s3}/u.bin", b"x")
    with pytest.raises(io.UnsupportedOperation):
        bridge.open(f"{s3}/u.bin", "a+b")


def test_backends_that_append_do_it_themselves(bridge, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    with bridge.open(f"pfio://file{tmp_path}/f.txt", "a") as f:
        f.write("two\n")
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"


# -- tensorboardX ---------------------------------------------------------------------------

tensorboardX = pytest.importorskip("tensorboardX")


def test_summary_writer_on_a_pfio_url_writes_to_s3(s3, tmp_path, monkeypatch):
    PfioFileSystem()  # loaded by fsspec for pfio:// URLs; tensorboardX learns the scheme
    monkeypatch.chdir(tmp_path)
    with tensorboardX.SummaryWriter(f"{s3}/tb") as writer:
        writer.add_scalar("loss", 0.5, 1)
    names = pfio.from_url(f"s3://{s3[10:]}").list("tb")
    assert [n for n in names if n.startswith("events.out.tfevents.")]
    assert os.listdir(tmp_path) == []


def test_event_file_is_published_at_each_flush_that_added_bytes(s3, s3_requests):
    from pfio.integrations.fsspec.tensorboard import EventFile

    url = f"{s3}/ev/events.out.tfevents.1"
    events = EventFile(url)
    events.write(b"one")
    events.flush()
    os.fsync(events.fileno())  # what tensorboardX does after each flush
    assert PfioFileSystem().cat_file(url) == b"one"
    with PfioFileSystem().target(url) as (fs, _):
        requests = s3_requests(fs)
    events.flush()  # nothing new: no upload
    assert requests == []
    events.write(b"two")
    events.close()
    assert PfioFileSystem().cat_file(url) == b"onetwo"
    assert events.closed


@pytest.mark.parametrize("without_wrapt", [False, True])
def test_tensorboardx_imported_after_the_bridge_learns_the_scheme(without_wrapt):
    """As under Lightning: fsspec loads the bridge first, tensorboardX is imported later
    (through a ``wrapt`` import hook; without ``wrapt``, imported by the bridge)."""
    script = "\n".join([
        "import sys",
        "sys.modules['wrapt'] = None" if without_wrapt else "",
        "import fsspec",
        "fsspec.filesystem('pfio')",
        "assert ('tensorboardX.record_writer' in sys.modules) == " + str(without_wrapt),
        "from tensorboardX import record_writer",
        "print(type(record_writer.REGISTERED_FACTORIES['pfio']).__name__)",
    ])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "EventFileFactory"
