"""PfioWebDataset over an index: one GET at startup, sample-level placement (each sample once
per epoch, at most world_size - 1 padding, equal counts), reads in runs, shuffle blocks,
and elastic resume on another world size and worker count."""

import collections
import json

import pytest
import torch

import pfio
from pfio.integrations.shards import ShardWriter, read_index
from pfio.integrations.shards.placement import epoch_order, rank_share, remaining
from pfio.integrations.torch import PfioWebDataset

stateful = pytest.importorskip("torchdata.stateful_dataloader")

N = 101  # no world size below divides it


def _key(sample):
    return sample["__key__"]


def _write(base, n=N, maxcount=9, payload=0):
    with ShardWriter(f"{base}/s-%03d.tar", maxcount=maxcount) as sink:
        for i in range(n):
            sink.write({"__key__": f"{i:04d}", "cls": i, "bin": b"x" * payload})
    return base


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return _write(str(tmp_path_factory.mktemp("indexed")))


def _ranks(url, world_size, **options):
    return [list(PfioWebDataset(url, rank=r, world_size=world_size, transform=_key, **options))
            for r in range(world_size)]


@pytest.mark.parametrize("world_size", [1, 3, 7, 64])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_sample_once_with_at_most_world_size_minus_one_padding(data, world_size, shuffle):
    ranks = _ranks(data, world_size, shuffle=shuffle, shuffle_block=20)
    per = -(-N // world_size)
    assert [len(keys) for keys in ranks] == [per] * world_size
    counts = collections.Counter(k for keys in ranks for k in keys)
    assert set(counts) == {f"{i:04d}" for i in range(N)}
    assert sum(counts.values()) - N == per * world_size - N <= world_size - 1


@pytest.mark.parametrize("world_size", [3, 7, 64])
def test_drop_last_gives_floor_and_repeats_nothing(data, world_size):
    ranks = _ranks(data, world_size, shuffle=True, drop_last=True)
    assert [len(keys) for keys in ranks] == [N // world_size] * world_size
    flat = [k for keys in ranks for k in keys]
    assert len(set(flat)) == len(flat) == N // world_size * world_size


def test_the_epochs_order_does_not_depend_on_world_size_or_workers(data):
    orders = []
    for world_size in (1, 3, 7):
        ranks = _ranks(data, world_size, shuffle=True, shuffle_block=30, seed=5)
        orders.append([k for keys in ranks for k in keys][:N])
    loader = torch.utils.data.DataLoader(
        PfioWebDataset(data, shuffle=True, shuffle_block=30, seed=5, transform=_key,
                       batch_size=4), batch_size=4, num_workers=2)
    orders.append([k for batch in loader for k in batch])
    assert all(order == orders[0] for order in orders)
    assert sorted(orders[0]) == [f"{i:04d}" for i in range(N)]


def test_shuffling_is_deterministic_per_seed_and_epoch_and_stays_in_blocks():
    counts = [10] * 10
    first = epoch_order(counts, seed=1, epoch=0, shuffle=True, shuffle_block=25)
    assert first == epoch_order(counts, seed=1, epoch=0, shuffle=True, shuffle_block=25)
    assert first != epoch_order(counts, seed=1, epoch=1, shuffle=True, shuffle_block=25)
    assert first != list(range(100)) and sorted(first) == list(range(100))
    shards_of = [{i // 10 for i in first[b:b + 25]} for b in range(0, 100, 25)]
    assert all(len(s) <= 4 for s in shards_of)  # a block spans the shards laid end to end


def test_padding_repeats_from_the_start_even_with_fewer_samples_than_ranks():
    shares = [rank_share(list(range(5)), r, 8, False) for r in range(8)]
    assert shares == [[0], [1], [2], [3], [4], [0], [1], [2]]


def test_set_epoch_changes_the_order(data):
    dataset = PfioWebDataset(data, shuffle=True, transform=_key)
    first = list(dataset)
    dataset.set_epoch(1)
    assert list(dataset) != first and sorted(list(dataset)) == sorted(first)


# -- requests -------------------------------------------------------------------------------

def test_startup_is_one_get_and_reads_are_runs(s3_env, s3_bucket, s3_requests):
    base = _write(f"s3://{s3_bucket}/run", n=60, maxcount=20, payload=2000)
    log = s3_requests(pfio.from_url(base))
    fleet = [PfioWebDataset(base + "/", rank=r, world_size=64) for r in range(64)]
    assert log == [("GET", f"/{s3_bucket}/run/pfio-index.json", None)] * 64
    assert sum(len(d) for d in fleet) == 64  # 60 samples and 4 repeated
    datasets = [PfioWebDataset(base, rank=r, world_size=4, transform=_key) for r in range(4)]
    del log[:]
    keys = [k for d in datasets for k in d]
    assert sorted(keys) == [f"{i:04d}" for i in range(60)]
    gets = [rng for method, _, rng in log if method == "GET"]
    # ranks hold samples 0-14, 15-29, 30-44, 45-59 of shards of 20: 6 (rank, shard) runs,
    # each one ranged GET (the head of a shard, or its tail with a suffix range)
    assert len(log) == len(gets) == 6 and all(gets)


def test_the_index_url_itself_or_a_missing_index(tmp_path, data):
    assert len(PfioWebDataset(data + "/pfio-index.json")) == N
    with pytest.raises(FileNotFoundError, match="pfio-index.json"):
        PfioWebDataset(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="shuffle=True"):
        PfioWebDataset(data, shuffle_buffer=10)


# -- resuming -------------------------------------------------------------------------------

def _run(url, world_size, workers, batches=None, state=None, batch_size=3):
    """Each rank's keys (the first ``batches`` batches), and the datasets."""
    out, datasets = [], []
    for rank in range(world_size):
        dataset = PfioWebDataset(url, rank=rank, world_size=world_size, shuffle=True,
                                 shuffle_block=16, seed=3, transform=_key,
                                 batch_size=batch_size)
        if state is not None:
            dataset.load_state_dict(json.loads(json.dumps(state)))
        loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size,
                                             num_workers=workers)
        keys = []
        for j, batch in enumerate(loader):
            if batches is not None and j == batches:
                break
            keys += batch
        out.append(keys)
        datasets.append(dataset)
    return out, datasets


@pytest.mark.parametrize(("workers", "workers_after"), [(0, 0), (2, 2), (2, 0)])
@pytest.mark.parametrize(("before", "after"), [(4, 3), (2, 5)])
def test_resuming_on_another_world_size_gives_exactly_the_rest(data, workers, workers_after,
                                                               before, after):
    seen, datasets = _run(data, before, workers, batches=3)
    samples_seen = sum(len(keys) for keys in seen)
    assert samples_seen == before * 9
    state = datasets[0].state_dict(samples_seen)
    assert state == datasets[1].state_dict(samples_seen)
    rest, _ = _run(data, after, workers_after, state=state)
    assert len({len(keys) for keys in rest}) == 1  # equal counts after the resume too
    counts = collections.Counter(k for keys in seen + rest for k in keys)
    assert set(counts) == {f"{i:04d}" for i in range(N)}
    assert sum(counts.values()) - N <= after - 1
    assert all(counts[k] == 1 for keys in seen for k in keys)


def test_resuming_twice_and_the_state_is_small_json(data):
    seen1, ds1 = _run(data, 4, 0, batches=2)
    state = ds1[0].state_dict(24)
    seen2, ds2 = _run(data, 3, 0, batches=2, state=state)
    state2 = ds2[0].state_dict(24 + 18)
    assert state2["history"] == [[24, 4, 0], [42, 3, 0]] and len(json.dumps(state2)) < 400
    rest, _ = _run(data, 5, 0, state=state2)
    flat = [k for keys in seen1 + seen2 + rest for k in keys]
    assert set(flat) == {f"{i:04d}" for i in range(N)} and len(flat) - N <= 4


def test_a_state_of_another_index_or_order_is_refused(tmp_path, data):
    other = _write(str(tmp_path), n=50)
    state = PfioWebDataset(data, shuffle=True, seed=3).state_dict(0)
    with pytest.raises(ValueError, match="another index"):
        PfioWebDataset(other, shuffle=True, seed=3).load_state_dict(state)
    with pytest.raises(ValueError, match="order would differ"):
        PfioWebDataset(data, shuffle=True, seed=4).load_state_dict(state)
    with pytest.raises(ValueError, match="lockstep"):
        PfioWebDataset(data, rank=0, world_size=2).state_dict(7)


def test_remaining_takes_each_ranks_prefix():
    order = list(range(10))
    assert remaining(order, [(4, 2, 0)]) == [2, 3, 4, 7, 8, 9]
    with pytest.raises(ValueError, match="held"):
        remaining(order, [(14, 2, 0)])


def test_a_stateful_loader_resumes_the_same_layout(data):
    def loader():
        dataset = PfioWebDataset(data, shuffle=True, seed=2, transform=_key, batch_size=2)
        return stateful.StatefulDataLoader(dataset, batch_size=2, num_workers=2)

    full = [k for batch in loader() for k in batch]
    first = loader()
    it = iter(first)
    head = [k for _ in range(7) for k in next(it)]
    state = first.state_dict()
    resumed = loader()
    resumed.load_state_dict(state)
    assert head + [k for batch in resumed for k in batch] == full


def test_the_index_is_read_once_per_dataset(data):
    index = read_index(data)
    dataset = PfioWebDataset(data)
    assert dataset.indexed.epochs.index.identity == index.identity


def test_my_shards_are_those_of_the_ranks_slice(data):
    index = read_index(data)
    assert PfioWebDataset(data, rank=0, world_size=3).my_shards() == [
        e.url for e in index.shards[:4]]  # samples 0 to 33, 9 a shard
