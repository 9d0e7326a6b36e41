"""tensorboardX's ``SummaryWriter`` on each spelling of a URL (README's "Works with"):

* ``mem://`` (any scheme of pfio's that tensorboardX does not know) after
  ``pfio.patch_all()``: tensorboardX opens the event file with ``open`` and calls
  ``os.fsync(f.fileno())`` on every flush, which the spooled write serves; the file is
  published when the writer closes.
* ``pfio://s3/...``, no patch needed: the fsspec bridge registers a tensorboardX writer for
  ``pfio``, which publishes the event file at each flush that added bytes.
* ``s3://``: tensorboardX's own writer (boto3, endpoint from ``S3_ENDPOINT``), patched or
  not: pfio is not on the way.
"""

import os
import subprocess
import sys

import pytest

import pfio
from pfio.integrations.tfrecord import iter_records
from pfio.patches import patch_all

tensorboardX = pytest.importorskip("tensorboardX")
pytest.importorskip("fsspec")

from tensorboardX.proto.event_pb2 import Event  # noqa: E402

from pfio.integrations.fsspec import PfioFileSystem  # noqa: E402


def _scalar_tags(url):
    """The tags of the scalars in the one event file under ``url``."""
    [name] = [n for n in pfio.from_url(url).list() if n.startswith("events.out.tfevents.")]
    return [v.tag for r in iter_records(f"{url}/{name}")
            for v in Event.FromString(r).summary.value]


def test_summary_writer_flushes_with_fsync_and_publishes_on_close(request):
    url = f"mem://tbx-{request.node.name}/run"
    patch_all()
    writer = tensorboardX.SummaryWriter(url)
    writer.add_scalar("loss", 1.0, 0)
    writer.flush()  # os.fsync(f.fileno()) of the event file
    writer.add_scalar("loss", 0.5, 1)
    writer.close()
    assert _scalar_tags(url) == ["loss", "loss"]


def test_summary_writer_on_a_pfio_url_writes_to_s3(s3_env, s3_bucket, tmp_path, monkeypatch):
    PfioFileSystem()  # loaded by fsspec for pfio:// URLs; tensorboardX learns the scheme
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    with tensorboardX.SummaryWriter(f"pfio://s3/{s3_bucket}/tb") as writer:
        writer.add_scalar("loss", 0.5, 1)
    assert _scalar_tags(f"s3://{s3_bucket}/tb") == ["loss"]
    assert os.listdir(tmp_path / "cwd") == []  # no local folder named "pfio:"


def test_event_file_is_published_at_each_flush_that_added_bytes(s3_env, s3_bucket,
                                                                s3_requests):
    from pfio.integrations.fsspec.tensorboard import EventFile

    url = f"pfio://s3/{s3_bucket}/ev/events.out.tfevents.1"
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


def test_s3_urls_go_to_tensorboardx_own_writer(s3_url):
    pytest.importorskip("boto3")
    with tensorboardX.SummaryWriter(f"{s3_url}/tb") as writer:
        writer.add_scalar("loss", 0.5, 1)
    assert _scalar_tags(f"{s3_url}/tb") == ["loss"]
