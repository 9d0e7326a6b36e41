import os
import subprocess
import sys
import textwrap

import torch
import torch.distributed.checkpoint as dcp

from pfio.integrations.torch.dcp import PfioFileSystem, PfioReader, PfioWriter

SCRIPT = """
import os, sys
import torch, torch.distributed as dist, torch.distributed.checkpoint as dcp
from pfio.integrations.torch.dcp import PfioReader, PfioWriter

rank, world, init, url = int(sys.argv[1]), 2, sys.argv[2], sys.argv[3]
dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
state = {"model": {"w": torch.full((4,), float(rank + 1)), "b": torch.arange(3.0)}}
dcp.save(state, storage_writer=PfioWriter(url, sync_files=False))
dist.barrier()
loaded = {"model": {"w": torch.zeros(4), "b": torch.zeros(3)}}
dcp.load(loaded, storage_reader=PfioReader(url))
print(rank, loaded["model"]["w"].tolist(), loaded["model"]["b"].tolist(), flush=True)
dist.destroy_process_group()
"""


def test_sharded_save_and_load_with_two_ranks(tmp_path):
    script = tmp_path / "dcp_job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    url = str(tmp_path / "ckpt")
    init = f"file://{tmp_path / 'rendezvous'}"
    procs = [subprocess.Popen([sys.executable, str(script), str(r), init, url],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    lines = sorted(out.strip() for out, _ in outputs)
    # replicated tensors: both ranks load what rank 0 saved
    assert lines == ["0 [1.0, 1.0, 1.0, 1.0] [0.0, 1.0, 2.0]",
                     "1 [1.0, 1.0, 1.0, 1.0] [0.0, 1.0, 2.0]"]
    assert ".metadata" in os.listdir(url)


def test_single_process_save_and_load_on_mem():
    url = "mem://dcp-single/step-1"
    state = {"w": torch.arange(5.0)}
    dcp.save(state, storage_writer=PfioWriter(url, sync_files=False), no_dist=True)
    loaded = {"w": torch.zeros(5)}
    dcp.load(loaded, storage_reader=PfioReader(url), no_dist=True)
    assert torch.equal(loaded["w"], state["w"])


def test_checkpoint_ids_are_validated_as_urls():
    assert PfioFileSystem.validate_checkpoint_id("s3://bucket/ckpt")
    assert not PfioFileSystem.validate_checkpoint_id("")


def test_writer_takes_file_system_writer_arguments_by_position(tmp_path):
    # FileSystemWriter(path, single_file_per_rank, sync_files, thread_count, ...): the same
    # order works on PfioWriter (a third positional argument used to be refused as a
    # second value of sync_files)
    writer = PfioWriter(str(tmp_path), False, True, 2)
    assert (writer.single_file_per_rank, writer.sync_files, writer.thread_count) \
        == (False, True, 2)
