"""pfio's Petastorm readers against the real Petastorm, on stores Petastorm wrote: the same
rows, values, types and splits (``seen``: what Petastorm's own readers returned)."""

from __future__ import annotations

import numpy as np
import pytest

from pfio.integrations.petastorm import (
    CompressedImageCodec,
    CompressedNdarrayCodec,
    NdarrayCodec,
    NGram,
    ScalarCodec,
    make_batch_reader,
    make_reader,
)
from pfio.integrations.petastorm.predicates import in_pseudorandom_split

pytestmark = pytest.mark.petastorm


def _rows(url, **kwargs):
    with make_reader(url, shuffle_row_groups=False, **kwargs) as reader:
        return sorted(reader, key=lambda row: row.id)


def test_the_stored_unischema_is_read(petastorm_data):
    with make_reader(str(petastorm_data / "codecs")) as reader:
        schema = reader.schema
    assert schema.name == "CodecsSchema"
    assert list(schema.fields) == ["id", "name", "value", "vec", "mat", "image", "var",
                                   "maybe"]
    assert schema.vec.shape == (4,) and schema.vec.numpy_dtype is np.float32
    assert isinstance(schema.id.codec, ScalarCodec)
    assert repr(schema.id.codec) == "ScalarCodec(IntegerType())"
    assert isinstance(schema.vec.codec, NdarrayCodec)
    assert isinstance(schema.mat.codec, CompressedNdarrayCodec)
    assert isinstance(schema.image.codec, CompressedImageCodec)
    assert schema.image.codec.image_codec == "png"
    assert schema.maybe.nullable and not schema.id.nullable


@pytest.mark.parametrize("name", ["id", "value", "vec", "mat", "image"])
def test_arrays_and_scalars_match_petastorm_row_for_row(petastorm_data, seen, name):
    rows = _rows(str(petastorm_data / "codecs"))
    got = np.stack([getattr(row, name) for row in rows])
    assert got.dtype == seen[f"codecs_{name}"].dtype
    np.testing.assert_array_equal(got, seen[f"codecs_{name}"])


def test_variable_shapes_strings_and_nulls_match_petastorm(petastorm_data, seen):
    rows = _rows(str(petastorm_data / "codecs"))
    assert [row.var.tolist() for row in rows] == seen["codecs_var"]
    assert [row.name for row in rows] == seen["codecs_name"]
    assert [None if row.maybe is None else int(row.maybe) for row in rows] == \
        seen["codecs_maybe"]


def test_rows_are_namedtuples_of_petastorm_types(petastorm_data, seen):
    row = _rows(str(petastorm_data / "codecs"))[1]
    assert list(row._fields) == seen["codecs_fields"]
    assert {name: type(value).__name__ for name, value in row._asdict().items()} == \
        seen["codecs_types"]


def test_hive_partition_values_match_petastorm(petastorm_data, seen):
    rows = _rows(str(petastorm_data / "partitioned"))
    assert sorted(rows[0]._fields) == seen["partitioned_fields"]
    assert [row.part for row in rows] == seen["partitioned_part"]
    np.testing.assert_array_equal(np.stack([row.vec for row in rows]),
                                  seen["partitioned_vec"])


def test_batch_reader_on_a_plain_store_matches_petastorm(petastorm_data, seen):
    with make_batch_reader(str(petastorm_data / "plain"), shuffle_row_groups=False) as reader:
        batches = list(reader)
        assert reader.batched_output
    assert list(batches[0]._fields) == seen["plain_fields"]
    assert [len(b.id) for b in batches] == seen["plain_batch_sizes"]
    for name in seen["plain_fields"]:
        column = np.concatenate([getattr(b, name) for b in batches])
        assert str(column.dtype) == seen[f"plain_{name}_dtype"]
        assert column.tolist() == seen[f"plain_{name}"]


def test_batch_reader_decodes_petastorm_codecs_per_batch(petastorm_data, seen):
    with make_batch_reader(str(petastorm_data / "codecs"), schema_fields=["id", "im.*"],
                           shuffle_row_groups=False) as reader:
        batches = list(reader)
    assert list(reader.schema.fields) == ["id", "image"]
    images = np.concatenate([b.image for b in batches])
    order = np.argsort(np.concatenate([b.id for b in batches]))
    np.testing.assert_array_equal(images[order], seen["codecs_image"])


@pytest.mark.parametrize("field, fractions", [("id", [0.3, 0.3, 0.4]),
                                              ("name", [0.5, 0.25, 0.25])])
def test_pseudorandom_split_matches_petastorm(petastorm_data, seen, field, fractions):
    for subset in range(3):
        rows = _rows(str(petastorm_data / "codecs"),
                     predicate=in_pseudorandom_split(fractions, subset, field))
        assert [int(row.id) for row in rows] == seen[f"split_{field}_{subset}"]


@pytest.mark.parametrize("overlap", [True, False])
def test_ngrams_match_petastorm(petastorm_data, seen, overlap):
    ngram = NGram({-1: ["id", "value"], 0: ["id", "name"]}, delta_threshold=1,
                  timestamp_field="id", timestamp_overlap=overlap)
    with make_reader(str(petastorm_data / "codecs"), schema_fields=ngram) as reader:
        grams = list(reader)
    assert list(grams[0][-1]._fields) == ["id", "value"]
    assert list(grams[0][0]._fields) == ["id", "name"]
    got = sorted([int(g[-1].id), float(g[-1].value), int(g[0].id), str(g[0].name)]
                 for g in grams)
    assert got == seen[f"ngram_{overlap}"]


def test_shards_hold_the_row_groups_petastorm_gives_them(petastorm_data, seen):
    for shard in range(3):
        with make_reader(str(petastorm_data / "codecs"), cur_shard=shard, shard_count=3,
                         seed=5) as reader:
            assert sorted(int(row.id) for row in reader) == seen[f"shard_{shard}"]
