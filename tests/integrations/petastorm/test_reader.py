"""make_reader / make_batch_reader on stores pfio writes: Petastorm's arguments and the
reader's life cycle (these need no Petastorm)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pfio.cache import ObjectCache
from pfio.integrations.parquet import Field, Schema, write_dataset
from pfio.integrations.petastorm import (
    NGram,
    NoDataAvailableError,
    TransformSpec,
    UnischemaField,
    make_batch_reader,
    make_reader,
)
from pfio.integrations.petastorm.predicates import in_intersection, in_lambda, in_set

ROWS, GROUP = 48, 6  # 8 row groups


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    url = str(tmp_path_factory.mktemp("petastorm-reader") / "store")
    schema = Schema([Field("id", np.int64), Field("label", np.str_),
                     Field("vec", np.float32, (3,), "ndarray")])
    write_dataset(url, schema, ({"id": i, "label": "ab"[i % 2],
                                 "vec": np.full(3, i, np.float32)} for i in range(ROWS)),
                  row_group_size=GROUP)
    return url


def _ids(reader):
    with reader:
        return [int(row.id) for row in reader]


def test_rows_are_namedtuples_of_the_stored_fields(store):
    with make_reader(store, shuffle_row_groups=False) as reader:
        rows = list(reader)
        assert not reader.batched_output
    assert [int(r.id) for r in rows] == list(range(ROWS))
    assert rows[5]._fields == ("id", "label", "vec")
    assert isinstance(rows[5].id, np.int64) and rows[5].label == "b"
    np.testing.assert_array_equal(rows[5].vec, np.full(3, 5, np.float32))


def test_schema_fields_take_regular_expressions_matching_whole_names(store):
    with make_reader(store, schema_fields=["i.", "vec"]) as reader:
        assert list(reader.schema.fields) == ["id", "vec"]
        assert next(reader)._fields == ("id", "vec")
    with pytest.raises(ValueError, match="no field"):
        make_reader(store, schema_fields=["i"])


def test_shuffling_is_seeded(store):
    first = _ids(make_reader(store, seed=3, shuffle_rows=True))
    assert first == _ids(make_reader(store, seed=3, shuffle_rows=True))
    assert sorted(first) == list(range(ROWS)) and first != list(range(ROWS))


def test_shuffle_row_groups_keeps_rows_of_a_group_in_order(store):
    ids = _ids(make_reader(store, seed=1))
    groups = [ids[i:i + GROUP] for i in range(0, ROWS, GROUP)]
    assert all(g == list(range(g[0], g[0] + GROUP)) for g in groups)
    assert [g[0] for g in groups] != sorted(g[0] for g in groups)


def test_shards_are_disjoint_and_complete(store):
    shards = [_ids(make_reader(store, cur_shard=k, shard_count=3, seed=0)) for k in range(3)]
    assert sorted(sum(shards, [])) == list(range(ROWS))
    assert all(shards)


def test_a_shard_keeps_its_row_groups_every_epoch(store):
    ids = _ids(make_reader(store, cur_shard=1, shard_count=4, num_epochs=3, seed=0))
    epochs = [sorted(ids[i:i + len(ids) // 3]) for i in range(0, len(ids), len(ids) // 3)]
    assert epochs[0] == epochs[1] == epochs[2]


@pytest.mark.parametrize("kwargs, error", [
    ({"cur_shard": 0}, ValueError), ({"shard_count": 2}, ValueError),
    ({"cur_shard": 2, "shard_count": 2}, ValueError),
    ({"cur_shard": 0, "shard_count": 9}, NoDataAvailableError),
    ({"reader_pool_type": "gpu"}, ValueError),
    ({"cache_type": "memcached"}, ValueError), ({"cache_type": "local-disk"}, ValueError),
    ({"rowgroup_selector": object()}, NotImplementedError),
    ({"shuffle_row_drop_partitions": 2}, NotImplementedError),
])
def test_arguments_pfio_cannot_honour_are_errors(store, kwargs, error):
    with pytest.raises(error):
        make_reader(store, **kwargs)


def test_num_epochs_repeats_the_rows(store):
    ids = _ids(make_reader(store, num_epochs=3, shuffle_row_groups=False))
    assert ids == list(range(ROWS)) * 3


def test_endless_reader(store):
    with make_reader(store, num_epochs=None) as reader:
        ids = [int(next(reader).id) for _ in range(ROWS * 2 + 5)]
    assert sorted(ids[:ROWS]) == sorted(ids[ROWS:2 * ROWS]) == list(range(ROWS))


def test_reset_reads_again_once_everything_was_read(store):
    with make_reader(store, num_epochs=1) as reader:
        next(reader)
        with pytest.raises(NotImplementedError):
            reader.reset()
        first = 1 + sum(1 for _ in reader)
        reader.reset()
        assert sum(1 for _ in reader) == first == ROWS


def test_a_stopped_reader_refuses_to_read(store):
    reader = make_reader(store)
    next(reader)
    reader.stop()
    reader.join()
    with pytest.raises(RuntimeError, match="stopped"):
        next(reader)


def test_predicate_keeps_matching_rows(store):
    ids = _ids(make_reader(store, predicate=in_lambda(["id"], lambda i: i % 5 == 0),
                           shuffle_row_groups=False))
    assert ids == list(range(0, ROWS, 5))


def test_filters_drop_rows(store):
    assert _ids(make_reader(store, filters=[("id", "<", 4)])) == [0, 1, 2, 3]


def test_transform_spec_on_rows(store):
    spec = TransformSpec(lambda row: {**row, "double": row["id"] * 2},
                         edit_fields=[("double", np.int64, (), False)],
                         removed_fields=["vec"])
    with make_reader(store, transform_spec=spec, shuffle_row_groups=False) as reader:
        assert list(reader.schema.fields) == ["id", "label", "double"]
        rows = list(reader)
    assert [(int(r.id), int(r.double)) for r in rows[:3]] == [(0, 0), (1, 2), (2, 4)]
    assert rows[0]._fields == ("id", "label", "double")


def test_transform_spec_on_batches_takes_a_dataframe(store):
    spec = TransformSpec(lambda frame: frame.assign(score=frame["id"] / 2),
                         edit_fields=[("score", np.float64, (), False)],
                         selected_fields=["score", "id"])
    with make_batch_reader(store, transform_spec=spec, shuffle_row_groups=False) as reader:
        batches = list(reader)
    assert batches[0]._fields == ("score", "id")
    np.testing.assert_array_equal(batches[0].score, np.arange(GROUP) / 2)


def test_batch_reader_yields_one_batch_per_row_group(store):
    with make_batch_reader(store, shuffle_row_groups=False, predicate=in_set({"a"}, "label"),
                           ) as reader:
        batches = list(reader)
    assert [len(b.id) for b in batches] == [GROUP // 2] * (ROWS // GROUP)
    assert batches[0].vec.shape == (GROUP // 2, 3)
    assert batches[0].label.dtype.kind == "U"


def test_ngram_of_consecutive_rows_within_row_groups(store):
    ngram = NGram({0: ["id"], 1: ["id", "vec"]}, delta_threshold=1, timestamp_field="id")
    with make_reader(store, schema_fields=ngram, shuffle_row_groups=False) as reader:
        grams = list(reader)
    assert len(grams) == (GROUP - 1) * (ROWS // GROUP)  # none across row groups
    assert [(int(g[0].id), int(g[1].id)) for g in grams[:2]] == [(0, 1), (1, 2)]
    assert grams[0][1]._fields == ("id", "vec")


def test_ngram_delta_threshold_breaks_windows(store):
    ngram = NGram({0: ["id"], 1: ["id"]}, delta_threshold=1, timestamp_field="id")
    with make_reader(store, schema_fields=ngram, predicate=in_lambda(["id"], lambda i: i != 3),
                     shuffle_row_groups=False) as reader:
        pairs = [(int(g[0].id), int(g[1].id)) for g in reader]
    assert (2, 4) not in pairs and (4, 5) in pairs


def test_ngram_rejects_bad_definitions():
    with pytest.raises(ValueError, match="consecutive"):
        NGram({0: ["id"], 2: ["id"]}, 1, "id")
    with pytest.raises(ValueError, match="delta_threshold"):
        NGram({0: ["id"]}, "1", "id")


def test_local_disk_cache_keeps_copies_of_the_files(store, tmp_path):
    location = str(tmp_path / "cache")
    reader = make_reader(store, cache_type="local-disk", cache_location=location,
                         cache_size_limit=10 << 20, shuffle_row_groups=False)
    assert _ids(reader) == list(range(ROWS))
    stored = sum(os.path.getsize(os.path.join(store, name)) for name in os.listdir(store))
    assert ObjectCache(location).usage() >= stored
    again = make_reader(store, cache_type="local-disk", cache_location=location,
                        shuffle_row_groups=False)
    assert _ids(again) == list(range(ROWS))


def test_edit_fields_take_unischema_fields(store):
    spec = TransformSpec(lambda row: {**row, "double": row["id"] * 2},
                         edit_fields=[UnischemaField("double", np.int64, (), None, False)],
                         selected_fields=["double"])
    with make_reader(store, transform_spec=spec, shuffle_row_groups=False) as reader:
        assert reader.schema.double.numpy_dtype == np.int64
        assert [int(r.double) for r in reader][:3] == [0, 2, 4]


def test_any_pfio_url(tmp_path):
    url = "mem://petastorm-test/store"
    write_dataset(url, Schema([Field("id", np.int64)]), ({"id": i} for i in range(5)))
    assert sorted(_ids(make_reader(url))) == list(range(5))


def test_in_lambda_passes_its_state_after_the_values(store):
    ids = _ids(make_reader(store, predicate=in_lambda(["id"], lambda i, top: i < top, 3),
                           shuffle_row_groups=False))
    assert ids == [0, 1, 2]


def test_in_intersection_keeps_rows_whose_array_holds_a_value(store):
    predicate = in_intersection([5.0, 40.0, 99.0], "vec")
    assert sorted(_ids(make_reader(store, predicate=predicate))) == [5, 40]
    with pytest.raises(ValueError, match="not a sequence"):
        _ids(make_reader(store, predicate=in_intersection(["a"], "label")))
