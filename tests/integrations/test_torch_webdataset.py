"""PfioWebDataset: webdataset-layout shards as a PyTorch IterableDataset, even across ranks,
resumable with torchdata's StatefulDataLoader (also after SIGKILL)."""

import io
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from PIL import Image

from pfio.integrations.shards import INDEX_NAME, ShardWriter, build_index
from pfio.integrations.torch import PfioWebDataset

stateful = pytest.importorskip("torchdata.stateful_dataloader")


def _png(value):
    out = io.BytesIO()
    Image.fromarray(np.full((4, 4, 3), value, np.uint8)).save(out, "PNG")
    return out.getvalue()


def _write(base, sizes, **fields):
    """Shards of ``sizes`` samples each (one ShardWriter per shard, so sizes may differ)."""
    urls, i = [], 0
    for n, size in enumerate(sizes):
        with ShardWriter(f"{base}/s{n}-%d.tar", maxcount=size, index=False) as sink:
            for _ in range(size):
                sink.write({"__key__": f"{i:04d}", "txt": f"t{i}", "cls": i % 3, **fields})
                i += 1
        urls += sink.shards
    build_index(urls)
    return urls


def _key(sample):
    return sample["__key__"]


@pytest.fixture
def shards(tmp_path):
    return _write(str(tmp_path), [6, 6, 6, 6])


def test_samples_are_dicts_by_extension_from_a_brace_pattern(tmp_path):
    _write(str(tmp_path), [2, 2])
    dataset = PfioWebDataset(str(tmp_path / "s{0,1}-0.tar"), decode="pil")
    samples = list(dataset)
    assert [s["__key__"] for s in samples] == ["0000", "0001", "0002", "0003"]
    assert samples[1] == {"__key__": "0001", "__url__": str(tmp_path / "s0-0.tar"),
                          "txt": "t1", "cls": 1}


def test_without_decode_fields_are_bytes(shards):
    sample = next(iter(PfioWebDataset(shards)))
    assert (sample["txt"], sample["cls"]) == (b"t0", b"0")


def test_jpg_cls_json_samples_give_image_and_label(tmp_path):
    with ShardWriter(str(tmp_path / "w-%d.tar")) as sink:
        for i in range(4):
            sink.write({"__key__": f"class_x/{i}", "png": _png(i * 10), "cls": i,
                        "json": {"i": i}})
    dataset = PfioWebDataset(sink.shards, decode="torch",
                             transform=lambda s: (s["png"], s["cls"], s["json"]["i"]))
    items = list(dataset)
    assert [(label, i) for _, label, i in items] == [(i, i) for i in range(4)]
    image = items[2][0]
    assert image.dtype == torch.uint8 and tuple(image.shape) == (3, 4, 4)
    assert int(image[0, 0, 0]) == 20


def test_a_shard_of_npy_arrays(tmp_path):
    with ShardWriter(str(tmp_path / "n-%d.tar")) as sink:
        for i in range(3):
            sink.write({"__key__": f"{i}", "npy": np.full(5, i, np.int64)})
    arrays = [s["npy"] for s in PfioWebDataset(sink.shards, decode="numpy")]
    assert [a.tolist() for a in arrays] == [[i] * 5 for i in range(3)]


def test_dataloader_workers_read_every_sample_once(shards):
    loader = torch.utils.data.DataLoader(PfioWebDataset(shards, transform=_key),
                                         batch_size=4, num_workers=2)
    keys = [k for batch in loader for k in batch]
    assert sorted(keys) == [f"{i:04d}" for i in range(24)]


def test_shuffling_is_deterministic_per_epoch(shards):
    def order(epoch, seed=1):
        dataset = PfioWebDataset(shards, shuffle_buffer=5, seed=seed, transform=_key)
        dataset.set_epoch(epoch)
        return list(dataset)
    assert order(0) == order(0)
    assert order(0) != order(1) and sorted(order(0)) == sorted(order(1))
    assert order(0) != [f"{i:04d}" for i in range(24)]


def test_the_dataset_pickles_small(shards):
    import pickle

    assert len(pickle.dumps(PfioWebDataset(shards, decode="pil", transform=_key))) < 2000


# -- even ranks -----------------------------------------------------------------------------

def _rank_keys(shards, rank, workers, **options):
    dataset = PfioWebDataset(shards, rank=rank, world_size=2, transform=_key, **options)
    loader = torch.utils.data.DataLoader(dataset, batch_size=2, num_workers=workers)
    batches = list(loader)
    return [k for b in batches for k in b], len(batches)


@pytest.mark.parametrize("workers", [0, 2])
def test_ranks_of_unequal_shards_yield_equal_counts(tmp_path, workers):
    shards = _write(str(tmp_path), [5, 9, 2])  # rank 0: 5 + 2 samples, rank 1: 9
    (keys0, batches0), (keys1, batches1) = (_rank_keys(shards, r, workers) for r in (0, 1))
    assert len(keys0) == len(keys1) and batches0 == batches1
    assert set(keys0) | set(keys1) == {f"{i:04d}" for i in range(16)}
    assert len(keys0) == (9 + 2 if workers == 2 else 9)


def test_padding_repeats_from_the_start_of_the_ranks_own_shards(tmp_path):
    shards = _write(str(tmp_path), [5, 9, 2])
    keys0, _ = _rank_keys(shards, 0, 0)
    assert keys0 == ["0000", "0001", "0002", "0003", "0004", "0014", "0015", "0000", "0001"]


def test_even_counts_without_index_come_from_a_pass_or_are_given(tmp_path, caplog):
    shards = _write(str(tmp_path), [5, 9, 2])
    os.remove(tmp_path / INDEX_NAME)
    with caplog.at_level("WARNING"):
        counted = PfioWebDataset(shards, rank=0, world_size=2)
    assert counted.counts == dict(zip(shards, [5, 9, 2], strict=True)) and "sidecar" in caplog.text
    given = PfioWebDataset(shards, rank=0, world_size=2, sample_counts=[5, 9, 2])
    assert given.counts == counted.counts


def test_a_shard_that_changed_since_it_was_counted_is_an_error(tmp_path):
    shards = _write(str(tmp_path), [5, 9, 2])
    dataset = PfioWebDataset(shards, rank=0, world_size=2, sample_counts=[4, 9, 2])
    with pytest.raises(ValueError, match="recorded count is 4"):
        list(dataset)


def test_even_epochs_need_a_shard_per_rank(tmp_path):
    shards = _write(str(tmp_path), [3])
    with pytest.raises(ValueError, match="each rank"):
        PfioWebDataset(shards, rank=0, world_size=2)
    assert len(list(PfioWebDataset(shards, rank=1, world_size=2, even=False))) == 0


# -- resuming -------------------------------------------------------------------------------

def _loader(shards, buffer):
    dataset = PfioWebDataset(shards, shuffle_buffer=buffer, seed=2, transform=_key)
    return stateful.StatefulDataLoader(dataset, batch_size=3, num_workers=2)


@pytest.mark.parametrize("buffer", [0, 5])
def test_a_stateful_loader_resumes_exactly_where_it_stopped(shards, buffer):
    full = [k for batch in _loader(shards, buffer) for k in batch]
    loader = _loader(shards, buffer)
    it = iter(loader)
    head = [k for _ in range(3) for k in next(it)]
    state = loader.state_dict()
    del it, loader
    resumed = _loader(shards, buffer)
    resumed.load_state_dict(state)
    rest = [k for batch in resumed for k in batch]
    assert head + rest == full and len(full) == 24


def test_a_state_saved_at_another_place_is_refused(shards):
    it = iter(PfioWebDataset(shards, rank=0, world_size=2, even=False))
    state = it.state_dict()
    other = iter(PfioWebDataset(shards, rank=1, world_size=2, even=False))
    with pytest.raises(ValueError, match="cannot resume"):
        other.load_state_dict(state)


TRAINING = """
import os, sys, time, torch
from torchdata.stateful_dataloader import StatefulDataLoader
from pfio.integrations.torch import PfioWebDataset

shards, checkpoint, delay = sys.argv[1].split(","), sys.argv[2], float(sys.argv[3])
dataset = PfioWebDataset(shards, shuffle_buffer=4, seed=7, transform=lambda s: s["__key__"])
loader = StatefulDataLoader(dataset, batch_size=2, num_workers=2)
seen = []
if os.path.exists(checkpoint):
    saved = torch.load(checkpoint, weights_only=True)
    loader.load_state_dict(saved["loader"])
    seen = saved["seen"]
for batch in loader:
    seen += list(batch)
    torch.save({"loader": loader.state_dict(), "seen": seen}, checkpoint + ".tmp")
    os.replace(checkpoint + ".tmp", checkpoint)
    time.sleep(delay)
torch.save({"seen": seen, "done": True}, checkpoint + ".done")
"""


def test_training_killed_mid_epoch_resumes_with_exactly_the_rest(tmp_path, shards):
    script = tmp_path / "train.py"
    script.write_text(TRAINING)
    checkpoint = str(tmp_path / "state.pt")
    command = [sys.executable, str(script), ",".join(shards), checkpoint]
    full = [k for batch in stateful.StatefulDataLoader(
        PfioWebDataset(shards, shuffle_buffer=4, seed=7, transform=_key),
        batch_size=2, num_workers=2) for k in batch]

    victim = subprocess.Popen(command + ["0.05"], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and victim.poll() is None:
            if os.path.exists(checkpoint) and \
                    len(torch.load(checkpoint, weights_only=True)["seen"]) >= 8:
                break
            time.sleep(0.02)
        assert victim.poll() is None, "the training ended before it could be killed"
    finally:
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()
    before = torch.load(checkpoint, weights_only=True)["seen"]
    assert 8 <= len(before) < len(full)

    subprocess.run(command + ["0"], check=True, timeout=120)
    after = torch.load(checkpoint + ".done", weights_only=True)["seen"]
    assert after == full
    assert json.dumps(after[:len(before)]) == json.dumps(before)
