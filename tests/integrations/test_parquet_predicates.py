import hashlib

import numpy as np
import pytest

from pfio.integrations.parquet import BatchReader, Field, RowReader, Schema, write_dataset
from pfio.integrations.parquet.predicates import (
    in_intersection,
    in_lambda,
    in_negate,
    in_pseudorandom_split,
    in_reduce,
    in_set,
)

from .parquet_places import PLACES, dataset_url

SCHEMA = Schema([
    Field("id", np.int64),
    Field("name", str),
    Field("vector", np.float32, (3,), "ndarray"),
    Field("blob", np.int16, (None,), "ndarray"),
])


def _row(i):
    return {"id": i, "name": f"n{i % 4}", "vector": np.full(3, i, np.float32),
            "blob": np.arange(i % 3 + 1, dtype=np.int16)}


@pytest.fixture(params=PLACES)
def dataset(request, tmp_path):
    """30 rows in 2 files of 3 row groups, on mem://, a local directory or S3 (moto)."""
    url = dataset_url(request, tmp_path, "parquet-pred")
    write_dataset(url, SCHEMA, (_row(i) for i in range(30)), row_group_size=5,
                  rows_per_file=15)
    return url


@pytest.fixture
def local(tmp_path):
    url = str(tmp_path / "ds")
    write_dataset(url, SCHEMA, (_row(i) for i in range(30)), row_group_size=5,
                  rows_per_file=15)
    return url


def _ids(url, predicate, **kwargs):
    return sorted(r["id"] for r in RowReader(url, predicate=predicate, **kwargs))


def _batch_ids(url, predicate, **kwargs):
    return sorted(i for b in BatchReader(url, batch_size=4, predicate=predicate, **kwargs)
                  for i in b["id"].tolist())


def test_in_set_keeps_the_rows_with_those_values(dataset):
    assert _ids(dataset, in_set({"n1", "n3"}, "name")) == [i for i in range(30) if i % 2]


def test_in_set_batches_agree_with_rows(dataset):
    predicate = in_set([3, 17, 29, 99], "id")
    assert _batch_ids(dataset, predicate) == _ids(dataset, predicate) == [3, 17, 29]


def test_in_set_of_values_of_another_type_compares_in_python(local):
    assert _ids(local, in_set(["3", 4.0], "id")) == [4]


def test_in_lambda_sees_decoded_arrays(local):
    predicate = in_lambda(["blob", "vector"], lambda blob, v: len(blob) == 2 and v[0] > 10)
    expected = [i for i in range(30) if i % 3 == 1 and i > 10]
    assert _ids(local, predicate) == _batch_ids(local, predicate) == expected


def test_in_negate_keeps_the_dropped_rows(local):
    assert _ids(local, in_negate(in_set(range(5, 30), "id"))) == [0, 1, 2, 3, 4]


def test_in_intersection_keeps_rows_every_predicate_keeps(local):
    predicate = in_intersection([in_set({"n0"}, "name"),
                                 in_lambda(["id"], lambda i: i >= 10)])
    assert _ids(local, predicate) == _batch_ids(local, predicate) == [12, 16, 20, 24, 28]


def test_in_reduce_with_any(local):
    predicate = in_reduce([in_set({1}, "id"), in_set({"n3"}, "name")], any)
    assert _ids(local, predicate) == [1, 3, 7, 11, 15, 19, 23, 27]


def test_in_reduce_with_a_custom_reduction_runs_per_row(local):
    exactly_one = in_reduce([in_lambda(["id"], lambda i: i < 10),
                             in_lambda(["id"], lambda i: i % 2 == 0)],
                            lambda results: sum(results) == 1)
    expected = [i for i in range(30) if (i < 10) != (i % 2 == 0)]
    assert _ids(local, exactly_one) == _batch_ids(local, exactly_one) == expected


def _md5_bucket(value):
    return int(hashlib.md5(str(value).encode()).hexdigest(), 16) % (2**63 - 1)


def test_pseudorandom_split_follows_petastorms_md5_buckets(local):
    """Petastorm's rule (checked row for row against Petastorm in
    tests/integrations/petastorm): the MD5 of ``str(value)`` modulo 2**63 - 1, cut by the
    cumulated fractions."""
    fractions = [0.3, 0.5, 0.2]
    bounds = np.cumsum([0] + fractions) * (2**63 - 2)
    for subset in range(3):
        expected = [i for i in range(30)
                    if bounds[subset] <= _md5_bucket(i) < bounds[subset + 1]]
        assert _ids(local, in_pseudorandom_split(fractions, subset, "id")) == expected


def test_pseudorandom_split_subsets_partition_the_rows(local):
    subsets = [_ids(local, in_pseudorandom_split([0.5, 0.5], k, "id")) for k in (0, 1)]
    assert sorted(subsets[0] + subsets[1]) == list(range(30))
    assert subsets[0] and subsets[1]


def test_pseudorandom_split_rejects_bad_arguments():
    with pytest.raises(ValueError, match="sum to <= 1"):
        in_pseudorandom_split([0.7, 0.7], 0, "id")
    with pytest.raises(ValueError, match="subset_index 2"):
        in_pseudorandom_split([0.5, 0.5], 2, "id")


def test_predicate_fields_are_read_but_not_returned(local):
    rows = list(RowReader(local, columns=["id"], predicate=in_set({"n2"}, "name")))
    assert rows == [{"id": i} for i in range(2, 30, 4)]
    batches = list(BatchReader(local, batch_size=100, columns=["id"],
                               predicate=in_set({"n2"}, "name")))
    assert list(batches[0]) == ["id"]


def test_predicate_after_filters(local):
    rows = _ids(local, in_set({"n0"}, "name"), filters=[("id", "<", 10)])
    assert rows == [0, 4, 8]


class _DuckPredicate:
    """A Petastorm-style predicate that is not one of pfio's classes."""

    def get_fields(self):
        return {"id"}

    def do_include(self, values):
        return values["id"] % 10 == 0


def test_any_object_with_the_two_methods_is_a_predicate(local):
    assert _ids(local, _DuckPredicate()) == _batch_ids(local, _DuckPredicate()) == [0, 10, 20]


def test_a_predicate_without_the_methods_is_a_type_error(local):
    with pytest.raises(TypeError, match="get_fields"):
        RowReader(local, predicate=lambda row: True)


def test_a_predicate_on_an_unknown_field_is_a_value_error(local):
    with pytest.raises(ValueError, match=r"predicate fields \['nope'\]"):
        RowReader(local, predicate=in_set({1}, "nope"))


def test_in_lambda_rejects_one_string_for_fields():
    with pytest.raises(TypeError, match="list of field names"):
        in_lambda("id", bool)


def test_in_reduce_needs_predicates():
    with pytest.raises(ValueError, match="at least one"):
        in_reduce([], all)
