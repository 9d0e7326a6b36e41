"""PfioTFRecordDataset: TFRecord shards as a PyTorch IterableDataset, split across ranks and
DataLoader workers, parsed, shuffled per epoch and resumable with StatefulDataLoader."""

import pickle

import pytest
import torch

pytest.importorskip("google_crc32c")

from pfio.integrations.tfrecord import TFRecordWriter, make_example  # noqa: E402
from pfio.integrations.torch import PfioTFRecordDataset  # noqa: E402


def _shards(base, counts=(5, 5, 5, 5), compression=None, suffix=""):
    urls, i = [], 0
    for n, count in enumerate(counts):
        url = f"{base}/part-{n}.tfrecord{suffix}"
        with TFRecordWriter(url, compression=compression) as writer:
            for _ in range(count):
                writer.write(make_example({"id": i, "name": f"r{i}"}))
                i += 1
        urls.append(url)
    return urls


def _id(example):
    return int(example["id"])


@pytest.fixture
def shards(tmp_path):
    return _shards(str(tmp_path))


def test_records_are_bytes_without_parse(shards):
    records = list(PfioTFRecordDataset(shards[:1]))
    assert len(records) == 5 and all(isinstance(r, bytes) for r in records)


def test_a_brace_pattern_and_a_spec_give_parsed_records(tmp_path, shards):
    dataset = PfioTFRecordDataset(f"{tmp_path}/part-{{0..3}}.tfrecord",
                                  parse={"id": "int64", "name": "bytes"})
    items = list(dataset)
    assert [int(x["id"]) for x in items] == list(range(20))
    assert items[3]["name"] == b"r3"


def test_parse_example_takes_every_feature_and_a_callable_anything(shards):
    assert list(PfioTFRecordDataset(shards[:1], parse="example"))[0]["name"] == [b"r0"]
    assert list(PfioTFRecordDataset(shards[:1], parse=len)) == \
        [len(make_example({"id": i, "name": f"r{i}"})) for i in range(5)]


def test_dataloader_workers_read_every_record_once(shards):
    dataset = PfioTFRecordDataset(shards, parse={"id": "int64"}, transform=_id)
    loader = torch.utils.data.DataLoader(dataset, batch_size=3, num_workers=2)
    assert sorted(i for batch in loader for i in batch.tolist()) == list(range(20))


@pytest.mark.parametrize("workers", [0, 2])
def test_ranks_read_disjoint_shards_that_cover_all(shards, workers):
    seen = []
    for rank in range(2):
        dataset = PfioTFRecordDataset(shards, parse={"id": "int64"}, transform=_id,
                                      rank=rank, world_size=2)
        loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers)
        seen.append(sorted(loader))
    assert seen[0] == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    assert sorted(seen[0] + seen[1]) == list(range(20))


def test_compressed_shards_known_by_their_names(tmp_path):
    shards = _shards(str(tmp_path), counts=(3, 4), compression="gzip", suffix=".gz")
    dataset = PfioTFRecordDataset(shards, parse={"id": "int64"}, transform=_id,
                                  compression="infer")
    assert list(dataset) == list(range(7))


def test_shuffling_is_deterministic_per_epoch(shards):
    def epoch(n):
        dataset = PfioTFRecordDataset(shards, parse={"id": "int64"}, transform=_id,
                                      shuffle_buffer=8, seed=3)
        dataset.set_epoch(n)
        return list(dataset)

    assert epoch(0) == epoch(0) and sorted(epoch(0)) == list(range(20))
    assert epoch(1) != epoch(0) and sorted(epoch(1)) == list(range(20))


def test_the_dataset_pickles_small(shards):
    dataset = PfioTFRecordDataset(shards, parse={"id": "int64"})
    assert len(pickle.dumps(dataset)) < 2000
    assert [int(x["id"]) for x in pickle.loads(pickle.dumps(dataset))] == list(range(20))


def test_bad_arguments_fail_when_the_dataset_is_made(shards):
    with pytest.raises(ValueError, match="'lz4'"):
        PfioTFRecordDataset(shards, compression="lz4")
    with pytest.raises(ValueError, match="feature 'id'"):
        PfioTFRecordDataset(shards, parse={"id": "int32"})
    with pytest.raises(ValueError, match="parse must be"):
        PfioTFRecordDataset(shards, parse=3)
    with pytest.raises(ValueError, match="no shards"):
        PfioTFRecordDataset([])


@pytest.mark.parametrize("buffer", [0, 5])
def test_a_stateful_loader_resumes_exactly_where_it_stopped(shards, buffer):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")

    def loader():
        dataset = PfioTFRecordDataset(shards, parse={"id": "int64"}, transform=_id,
                                      shuffle_buffer=buffer, seed=2)
        return stateful.StatefulDataLoader(dataset, batch_size=3, num_workers=2)

    full = [i for batch in loader() for i in batch.tolist()]
    first = loader()
    it = iter(first)
    head = [i for _ in range(3) for i in next(it).tolist()]
    state = first.state_dict()
    del it, first
    resumed = loader()
    resumed.load_state_dict(state)
    assert head + [i for batch in resumed for i in batch.tolist()] == full
    assert sorted(full) == list(range(20))
