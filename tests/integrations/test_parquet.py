import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import pfio
from pfio.integrations.parquet import BatchReader, Field, RowReader, Schema, write_dataset
from pfio.integrations.torch.parquet import ParquetBatchDataset, ParquetRowDataset

from .parquet_places import PLACES, dataset_url

SCHEMA = Schema([
    Field("id", np.int64),
    Field("image", np.uint8, (4, 4, 3), "png"),
    Field("features", np.float32, (None, 2), "ndarray"),
    Field("name", str),
])


def _row(i):
    return {"id": i, "image": np.full((4, 4, 3), i % 256, np.uint8),
            "features": np.full((i % 3 + 1, 2), i, np.float32), "name": f"row{i}"}


@pytest.fixture(params=PLACES)
def dataset(request, tmp_path):
    """A dataset of 40 rows in 2 files of 4 row groups, on mem://, a local directory or S3
    (the moto server of tests/conftest.py)."""
    url = dataset_url(request, tmp_path, "parquet")
    write_dataset(url, SCHEMA, (_row(i) for i in range(40)), row_group_size=5, rows_per_file=20)
    return url


def test_round_trip_restores_arrays_and_images(dataset):
    rows = list(RowReader(dataset))
    assert [r["id"] for r in rows] == list(range(40))
    np.testing.assert_array_equal(rows[7]["image"], np.full((4, 4, 3), 7, np.uint8))
    np.testing.assert_array_equal(rows[7]["features"], np.full((2, 2), 7, np.float32))
    assert rows[7]["name"] == "row7"


def test_files_and_row_groups_follow_the_sizes(dataset):
    reader = RowReader(dataset)
    assert [u.rsplit("/", 1)[1] for u in reader.files] == ["part-00000.parquet",
                                                          "part-00001.parquet"]
    assert [g.num_rows for g in reader.row_groups] == [5] * 8


def test_schema_is_stored_in_the_file_metadata(dataset):
    with pfio.open_url(f"{dataset}/part-00000.parquet", "rb") as f:
        stored = Schema.from_arrow(pq.ParquetFile(f).schema_arrow)
    assert stored.fields["features"].shape == (None, 2)


def test_column_selection(dataset):
    row = next(iter(RowReader(dataset, columns=["id", "name"])))
    assert row == {"id": 0, "name": "row0"}


def test_row_group_predicates(dataset):
    ids = [r["id"] for r in RowReader(dataset, columns=["id"], filters=[("id", ">=", 33)])]
    assert ids == list(range(33, 40))


def test_shuffling_is_deterministic_and_changes_with_the_epoch(dataset):
    def order(epoch):
        reader = RowReader(dataset, columns=["id"], shuffle=True, seed=5)
        reader.set_epoch(epoch)
        return [r["id"] for r in reader]

    assert order(0) == order(0)
    assert order(0) != order(1)
    assert sorted(order(1)) == list(range(40))


def test_every_row_read_once_across_ranks_and_workers(dataset):
    ids = []
    for rank in range(2):
        loader = torch.utils.data.DataLoader(
            ParquetRowDataset(dataset, columns=["id"], rank=rank, world_size=2, shuffle=True),
            batch_size=None, num_workers=2)
        ids += [int(row["id"]) for row in loader]
    assert sorted(ids) == list(range(40))


def test_batches_stack_fixed_shapes_and_list_variable_ones(dataset):
    batch = next(iter(BatchReader(dataset, batch_size=8)))
    assert batch["image"].shape == (8, 4, 4, 3)
    assert batch["id"].tolist() == list(range(8))
    assert isinstance(batch["features"], list) and batch["features"][1].shape == (2, 2)


def test_batch_sizes_cover_every_row(dataset):
    sizes = [len(b["id"]) for b in BatchReader(dataset, batch_size=7, columns=["id"])]
    assert sizes == [7, 7, 7, 7, 7, 5]


def test_batch_dataset_yields_tensors(dataset):
    batch = next(iter(ParquetBatchDataset(dataset, batch_size=4, columns=["id", "image"])))
    assert isinstance(batch["image"], torch.Tensor) and batch["image"].shape == (4, 4, 4, 3)


def test_foreign_parquet_file_is_read_by_the_batch_reader(request):
    url = f"mem://parquet-{request.node.name}/plain.parquet"
    table = pa.table({"x": list(range(10)), "y": [float(i) / 2 for i in range(10)]})
    with pfio.open_url(url, "wb") as f:
        pq.write_table(table, f, row_group_size=4)
    batches = list(BatchReader(url, batch_size=10))
    assert batches[0]["x"].tolist() == list(range(10))
    assert batches[0]["y"][3] == 1.5


def test_shape_mismatch_is_rejected(request):
    with pytest.raises(ValueError, match="does not match"):
        write_dataset(f"mem://parquet-{request.node.name}/bad", SCHEMA,
                      [{**_row(0), "image": np.zeros((3, 3, 3), np.uint8)}])


def test_unknown_fields_are_rejected(request):
    with pytest.raises(ValueError, match="do not match the schema"):
        write_dataset(f"mem://parquet-{request.node.name}/bad", SCHEMA, [{**_row(0), "x": 1}])


def test_a_failed_write_publishes_no_file(request):
    url = f"mem://parquet-{request.node.name}/partial"

    def rows():
        yield from (_row(i) for i in range(7))
        raise RuntimeError("source broke")

    with pytest.raises(RuntimeError):
        write_dataset(url, SCHEMA, rows(), row_group_size=5)
    assert list(pfio.from_url(url).list()) == []


def test_missing_dataset_is_file_not_found():
    with pytest.raises(FileNotFoundError):
        RowReader("mem://parquet-missing/none")


def test_footer_longer_than_the_first_tail_read(dataset, monkeypatch):
    from pfio.integrations.parquet import reader

    monkeypatch.setattr(reader, "FOOTER_GUESS", 16)
    assert [r["id"] for r in RowReader(dataset, columns=["id"])] == list(range(40))


def test_a_file_that_is_not_parquet_is_a_value_error(request):
    url = f"mem://parquet-{request.node.name}/ds"
    with pfio.open_url(f"{url}/part-0.parquet", "wb") as f:
        f.write(b"not a parquet file at all")
    with pytest.raises(ValueError, match="not a Parquet file"):
        RowReader(url)


def _open_fds(folder):
    """How many of this process's file descriptors are files under ``folder`` (not all of
    them: a socket another test left to the garbage collector may close meanwhile)."""
    import os

    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder))
        except OSError:  # closed since it was listed
            pass
    return count


@pytest.fixture
def local_dataset(tmp_path):
    url = str(tmp_path / "ds")
    write_dataset(url, SCHEMA, (_row(i) for i in range(40)), row_group_size=5, rows_per_file=20)
    return url


def test_the_first_pass_reads_with_the_files_opened_for_the_footers(s3_env, s3_bucket):
    from pfio import trace

    url = f"s3://{s3_bucket}/ds"
    write_dataset(url, SCHEMA, (_row(i) for i in range(40)), row_group_size=5, rows_per_file=20)

    def opens():
        return trace.metrics().operations[("s3", "open")].count

    with trace.tracing():
        reader = RowReader(url, columns=["id"])
        assert len(list(reader)) == 40
        first = opens()
        trace.reset()
        assert len(list(reader)) == 40
        second = opens()
    assert (first, second) == (2, 2)  # the second pass opens the 2 files again


def test_a_reader_never_iterated_closes_its_files_when_dropped(local_dataset):
    import gc

    before = _open_fds(local_dataset)
    reader = RowReader(local_dataset)
    assert _open_fds(local_dataset) == before + 2
    del reader
    gc.collect()
    assert _open_fds(local_dataset) == before


def test_a_pass_closes_every_file(local_dataset):
    before = _open_fds(local_dataset)
    assert len(list(BatchReader(local_dataset, batch_size=7))) == 6
    assert _open_fds(local_dataset) == before


def test_a_file_that_is_not_parquet_leaves_no_file_open(local_dataset):
    import os

    with open(os.path.join(local_dataset, "part-9.parquet"), "wb") as f:
        f.write(b"not parquet")
    before = _open_fds(local_dataset)
    with pytest.raises(ValueError, match="not a Parquet file"):
        RowReader(local_dataset)
    assert _open_fds(local_dataset) == before


def test_a_pickled_reader_opens_its_own_files(local_dataset):
    import pickle

    reader = RowReader(local_dataset, columns=["id"])
    copy = pickle.loads(pickle.dumps(reader))
    assert sorted(r["id"] for r in copy) == list(range(40))
    assert sorted(r["id"] for r in reader) == list(range(40))
