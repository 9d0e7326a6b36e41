"""The torch loaders of pfio.integrations.petastorm.pytorch, and a Petastorm training script
whose imports alone changed, reading a store Petastorm wrote from S3."""

from __future__ import annotations

import decimal

import numpy as np
import pytest
import torch

import pfio
from pfio.integrations.parquet import Field, Schema, write_dataset
from pfio.integrations.petastorm import make_batch_reader, make_reader
from pfio.integrations.petastorm.pytorch import (
    BatchedDataLoader,
    DataLoader,
    InMemBatchedDataLoader,
    decimal_friendly_collate,
)

ROWS = 30


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    url = str(tmp_path_factory.mktemp("petastorm-torch") / "store")
    schema = Schema([Field("id", np.int64), Field("flag", np.bool_),
                     Field("small", np.uint16), Field("vec", np.float32, (2,), "ndarray"),
                     Field("maybe", np.int64, (), "scalar", nullable=True)])
    write_dataset(url, schema, ({"id": i, "flag": i % 2 == 0, "small": i, "vec": [i, -i],
                                 "maybe": None if i == 7 else i} for i in range(ROWS)),
                  row_group_size=8)
    return url


FIELDS = ["id", "flag", "small", "vec"]


def test_data_loader_collates_rows_into_batches(store):
    reader = make_reader(store, schema_fields=FIELDS, shuffle_row_groups=False)
    with DataLoader(reader, batch_size=8) as loader:
        batches = list(loader)
    assert [len(b["id"]) for b in batches] == [8, 8, 8, 6]
    assert batches[0]["vec"].shape == (8, 2) and batches[0]["vec"].dtype == torch.float32
    assert batches[0]["flag"].dtype == torch.uint8  # bools promoted, as Petastorm does
    assert batches[0]["small"].dtype == torch.int32  # uint16 too
    assert torch.cat([b["id"] for b in batches]).tolist() == list(range(ROWS))


def test_data_loader_shuffling_queue_yields_every_row_once(store):
    reader = make_reader(store, schema_fields=["id"], shuffle_row_groups=False)
    with DataLoader(reader, batch_size=4, shuffling_queue_capacity=10) as loader:
        ids = torch.cat([b["id"] for b in loader]).tolist()
    assert sorted(ids) == list(range(ROWS)) and ids != list(range(ROWS))


def test_data_loader_splits_batches_of_a_batch_reader(store):
    reader = make_batch_reader(store, schema_fields=["id", "vec"], shuffle_row_groups=False)
    with DataLoader(reader, batch_size=5) as loader:
        batches = list(loader)
    assert [len(b["id"]) for b in batches] == [5] * 6
    assert batches[1]["vec"][0].tolist() == [5.0, -5.0]


def test_a_second_pass_resets_the_reader(store):
    loader = DataLoader(make_reader(store, schema_fields=["id"]), batch_size=10)
    assert sum(len(b["id"]) for b in loader) == ROWS
    assert sum(len(b["id"]) for b in loader) == ROWS


def test_a_pass_cannot_start_during_another(store):
    loader = DataLoader(make_reader(store, schema_fields=["id"]), batch_size=10)
    first = iter(loader)
    next(first)
    with pytest.raises(RuntimeError, match="under way"):
        next(iter(loader))


def test_none_values_are_a_type_error_and_stop_the_loader(store):
    loader = DataLoader(make_reader(store, schema_fields=["id", "maybe"],
                                    shuffle_row_groups=False), batch_size=4)
    with pytest.raises(TypeError, match="maybe"):
        list(loader)
    with pytest.raises(RuntimeError, match="failed"):
        list(loader)


def test_batched_loader_makes_tensor_batches(store):
    reader = make_batch_reader(store, schema_fields=FIELDS, shuffle_row_groups=False)
    with BatchedDataLoader(reader, batch_size=7) as loader:
        batches = list(loader)
    assert [len(b["id"]) for b in batches] == [7, 7, 7, 7, 2]
    assert torch.cat([b["id"] for b in batches]).tolist() == list(range(ROWS))
    assert batches[0]["vec"].shape == (7, 2)


def test_batched_loader_shuffles_rows_across_batches(store):
    reader = make_batch_reader(store, schema_fields=["id"], shuffle_row_groups=False)
    with BatchedDataLoader(reader, batch_size=5, shuffling_queue_capacity=12) as loader:
        ids = torch.cat([b["id"] for b in loader]).tolist()
    assert sorted(ids) == list(range(ROWS)) and ids != list(range(ROWS))


def test_batched_loader_takes_rows_of_a_row_reader(store):
    reader = make_reader(store, schema_fields=["id"], shuffle_row_groups=False)
    with BatchedDataLoader(reader, batch_size=16) as loader:
        assert [len(b["id"]) for b in loader] == [16, 14]


def test_in_memory_loader_serves_epochs_from_memory(store):
    reader = make_batch_reader(store, schema_fields=["id", "vec"], shuffle_row_groups=False)
    loader = InMemBatchedDataLoader(reader, batch_size=8, num_epochs=2, rows_capacity=20,
                                    shuffle=True, seed=4)
    assert reader.stopped
    epochs = [b["id"] for b in loader]
    assert [len(b) for b in epochs] == [8, 8, 4] * 2
    first, second = torch.cat(epochs[:3]).tolist(), torch.cat(epochs[3:]).tolist()
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    with pytest.raises(RuntimeError, match="one loop"):
        list(loader)


def test_decimal_friendly_collate_keeps_decimals_and_strings_as_lists():
    batch = decimal_friendly_collate([
        {"d": decimal.Decimal("1.5"), "s": "a", "x": np.float32(1), "t": (1, "u")},
        {"d": decimal.Decimal("2"), "s": "b", "x": np.float32(2), "t": (2, "v")}])
    assert batch["d"] == [decimal.Decimal("1.5"), decimal.Decimal("2")]
    assert batch["s"] == ["a", "b"]
    assert batch["x"].tolist() == [1.0, 2.0]
    assert batch["t"][0].tolist() == [1, 2] and batch["t"][1] == ["u", "v"]


@pytest.mark.petastorm
def test_a_petastorm_training_script_with_its_imports_changed_on_s3(petastorm_data, seen,
                                                                    s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/codecs"
    pfio.sync(str(petastorm_data / "codecs"), url)
    # the script: `from petastorm import make_reader` and
    # `from petastorm.pytorch import DataLoader`, with `pfio.integrations.` put in front
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    seen_ids = []
    with DataLoader(make_reader(url, num_epochs=2, schema_fields=["id", "vec", "image"],
                                seed=0), batch_size=8) as train_loader:
        for batch in train_loader:
            optimizer.zero_grad()
            loss = model(batch["vec"]).pow(2).mean()
            loss.backward()
            optimizer.step()
            seen_ids += batch["id"].tolist()
            for i, row_id in enumerate(batch["id"].tolist()):
                assert torch.equal(batch["image"][i],
                                   torch.from_numpy(seen["codecs_image"][row_id]))
    assert sorted(seen_ids) == sorted(list(range(40)) * 2)
