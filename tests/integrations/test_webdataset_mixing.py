"""PfioMixedDataset: indexed streams mixed by weight, deterministic, resumable exactly (on
the same layout and on another world size), set_epoch passed down."""

import collections
import json

import pytest
import torch

from pfio.integrations.shards import ShardWriter
from pfio.integrations.torch import PfioMixedDataset, PfioWebDataset


def _write(base, prefix, n):
    with ShardWriter(f"{base}/{prefix}-%03d.tar", maxcount=1000) as sink:
        for i in range(n):
            sink.write({"__key__": f"{prefix}{i:05d}", "cls": i})
    return base


@pytest.fixture(scope="module")
def streams(tmp_path_factory):
    a = _write(str(tmp_path_factory.mktemp("a")), "a", 8000)
    b = _write(str(tmp_path_factory.mktemp("b")), "b", 4000)
    return a, b


def _key(sample):
    return sample["__key__"]


def _mixed(streams, rank=0, world_size=1, seed=0, batch_size=None):
    children = [PfioWebDataset(url, rank=rank, world_size=world_size, shuffle=True, seed=1,
                               transform=_key, batch_size=batch_size) for url in streams]
    return PfioMixedDataset(children, [0.7, 0.3], seed=seed, batch_size=batch_size)


def test_weights_give_the_proportions_over_10000_samples(streams):
    keys = [k for _, k in zip(range(10_000), _mixed(streams), strict=False)]
    share = sum(k.startswith("a") for k in keys) / len(keys)
    assert abs(share - 0.7) <= 0.01
    assert len(set(keys)) == len(keys)
    firsts = [k[0] for k in keys[:40]]
    assert firsts != sorted(firsts)  # interleaved, not one stream after the other


def test_the_mix_is_deterministic_and_seeded(streams):
    first = [k for _, k in zip(range(300), _mixed(streams), strict=False)]
    assert first == [k for _, k in zip(range(300), _mixed(streams), strict=False)]
    assert first != [k for _, k in zip(range(300), _mixed(streams, seed=1), strict=False)]


def test_the_epoch_ends_when_a_stream_runs_out(streams):
    mixed = _mixed(streams)
    keys = list(mixed)
    counts = collections.Counter(k[0] for k in keys)
    assert counts["a"] == 8000 and counts["b"] < 4000 and len(mixed) == len(keys)


def test_set_epoch_is_passed_down(streams):
    mixed = _mixed(streams)
    mixed.set_epoch(3)
    assert [d.epoch for d in mixed.datasets] == [3, 3]


def _take(mixed, n, workers, batch_size):
    loader = torch.utils.data.DataLoader(mixed, batch_size=batch_size, num_workers=workers)
    out = []
    for batch in loader:
        out += batch
        if n is not None and len(out) >= n:
            break
    return out


@pytest.mark.parametrize("workers", [0, 2])
def test_resuming_on_the_same_layout_is_exact(streams, workers):
    full = _take(_mixed(streams, batch_size=50), None, workers, 50)
    mixed = _mixed(streams, batch_size=50)
    head = _take(mixed, 1000, workers, 50)
    state = json.loads(json.dumps(mixed.state_dict(len(head))))
    resumed = _mixed(streams, batch_size=50)
    resumed.load_state_dict(state)
    assert head + _take(resumed, None, workers, 50) == full


def test_resuming_on_another_world_size_repeats_nothing_and_keeps_the_proportions(streams):
    mixed = _mixed(streams, batch_size=50)
    head = _take(mixed, 1000, 0, 50)
    state = mixed.state_dict(1000)
    rest = []
    for rank in range(3):
        resumed = _mixed(streams, rank=rank, world_size=3, batch_size=50)
        resumed.load_state_dict(state)
        rest.append(_take(resumed, None, 0, 50))
    assert len({len(r) for r in rest}) == 1
    flat = head + [k for r in rest for k in r]
    repeats = len(flat) - len(set(flat))
    assert repeats <= 2 * 2  # each stream pads at most world_size - 1
    share = sum(k.startswith("a") for k in flat) / len(flat)
    assert abs(share - 0.7) <= 0.01


def test_bad_arguments_are_refused(streams, tmp_path):
    children = [PfioWebDataset(u) for u in streams]
    with pytest.raises(ValueError, match="one positive weight"):
        PfioMixedDataset(children, [1.0])
    with pytest.raises(ValueError, match="positive"):
        PfioMixedDataset(children, [1.0, 0.0])
    with pytest.raises(ValueError, match="rank"):
        PfioMixedDataset([children[0], PfioWebDataset(streams[1], rank=1, world_size=2)],
                         [1, 1])
    with pytest.raises(ValueError, match="not a PfioMixedDataset state"):
        PfioMixedDataset(children, [1, 1]).load_state_dict({"epoch": 0})


def test_a_stateful_loader_resumes_the_mix_on_the_same_layout(streams):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")

    def loader():
        return stateful.StatefulDataLoader(_mixed(streams, batch_size=50), batch_size=50,
                                           num_workers=2)

    full = [k for batch in loader() for k in batch]
    first = loader()
    it = iter(first)
    head = [k for _ in range(9) for k in next(it)]
    state = first.state_dict()
    resumed = loader()
    resumed.load_state_dict(state)
    assert head + [k for batch in resumed for k in batch] == full
