"""DCP checkpoints are atomic: a process killed (SIGKILL) at any point of an overwrite leaves
a checkpoint that loads all-old or all-new, never a mix (local disk and S3)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException

from pfio.integrations.torch.dcp import PfioReader, PfioWriter

#: argv: url, seed, kills. Saves version 0, counts the events (the 1st, 2nd, 4th, 8th ...
#: write of a data or metadata stream, a file published, a file removed) of one overwrite,
#: then forks a child per kill point that overwrites with the next version and SIGKILLs
#: itself at its k-th event; after each, loads and prints what it found as JSON.
SCRIPT = """
import contextlib, json, os, random, signal, sys, warnings
import torch, torch.distributed.checkpoint as dcp
from pfio.integrations.torch.dcp import PfioFileSystem, PfioReader, PfioWriter

warnings.simplefilter("ignore")
url, seed, kills = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def state(v):
    return {f"t{i}": torch.full((64 + i,), float(v)) for i in range(6)}

def save(v):
    dcp.save(state(v), storage_writer=PfioWriter(url, thread_count=2), no_dist=True)

def load():
    target = state(-1)
    try:
        dcp.load(target, storage_reader=PfioReader(url), no_dist=True)
    except Exception as exc:
        return f"error: {exc!r}"
    return sorted({float(x) for t in target.values() for x in t})

count, kill_at = [0], [None]

def event():
    count[0] += 1
    if count[0] == kill_at[0]:
        os.kill(os.getpid(), signal.SIGKILL)

class Counted:
    def __init__(self, stream):
        self._stream = stream
        self._writes = 0
    def write(self, b):
        self._writes += 1
        if self._writes & (self._writes - 1) == 0:
            event()
        return self._stream.write(b)
    def close(self):
        self._stream.close()
        event()
    def __getattr__(self, name):
        return getattr(self._stream, name)

create_stream, rm_file = PfioFileSystem.create_stream, PfioFileSystem.rm_file

@contextlib.contextmanager
def counted_stream(self, path, mode):
    with create_stream(self, path, mode) as stream:
        yield Counted(stream) if "w" in mode else stream
    if "w" in mode:
        event()

def counted_rm(self, path):
    event()
    rm_file(self, path)
    event()

PfioFileSystem.create_stream, PfioFileSystem.rm_file = counted_stream, counted_rm
save(0)
count[0] = 0
save(1)
events = count[0]
points = sorted(random.Random(seed).sample(range(1, events + 1), min(kills, events)))
old = 1
for version, k in enumerate(points, start=2):
    pid = os.fork()
    if pid == 0:
        count[0], kill_at[0] = 0, k
        save(version)
        os._exit(3)  # not killed: the count was wrong
    _, status = os.waitpid(pid, 0)
    found = load()
    print(json.dumps({"k": k, "events": events, "killed": os.WIFSIGNALED(status),
                      "old": old, "new": version, "found": found}), flush=True)
    if found == [version]:
        old = version
"""


@pytest.fixture(params=["local", "s3"])
def url(request, tmp_path):
    if request.param == "local":
        return str(tmp_path / "ckpt")
    request.getfixturevalue("s3_env")
    return f"s3://{request.getfixturevalue('s3_bucket')}/run/ckpt"


def test_sigkill_during_an_overwrite_never_leaves_a_torn_checkpoint(url, tmp_path):
    script = tmp_path / "overwrite.py"
    script.write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run([sys.executable, str(script), url, "35", "20"], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == 20
    for r in results:
        assert r["killed"], r
        assert r["found"] in ([r["old"]], [r["new"]]), r  # never a mix, never an error
    outcomes = {"old" if r["found"] == [r["old"]] else "new" for r in results}
    assert outcomes == {"old", "new"}  # kill points before and after publishing


def test_an_overwrite_removes_the_old_data_files(tmp_path):
    url = str(tmp_path / "ckpt")
    for value in (1.0, 2.0):
        dcp.save({"w": torch.full((8,), value)}, storage_writer=PfioWriter(url), no_dist=True)
    files = sorted(os.listdir(url))
    assert len(files) == 2 and files[0] == ".metadata" and files[1].endswith(".distcp")
    loaded = {"w": torch.zeros(8)}
    dcp.load(loaded, storage_reader=PfioReader(url), no_dist=True)
    assert torch.equal(loaded["w"], torch.full((8,), 2.0))


def test_a_failed_save_leaves_the_previous_checkpoint(tmp_path):
    url = str(tmp_path / "ckpt")
    dcp.save({"w": torch.ones(4)}, storage_writer=PfioWriter(url), no_dist=True)

    class Broken(PfioWriter):
        def finish(self, metadata, results):
            raise OSError("the metadata could not be written")

    with pytest.raises(CheckpointException, match="metadata could not be written"):
        dcp.save({"w": torch.zeros(4)}, storage_writer=Broken(url), no_dist=True)
    loaded = {"w": torch.zeros(4)}
    dcp.load(loaded, storage_reader=PfioReader(url), no_dist=True)
    assert torch.equal(loaded["w"], torch.ones(4))
