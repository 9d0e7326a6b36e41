import json
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pfio.integrations.parquet import (
    BatchReader,
    Field,
    RowReader,
    Schema,
    register_codec,
    unregister_codec,
    write_dataset,
)
from pfio.integrations.parquet.predicates import in_set
from pfio.integrations.parquet.transform import TransformSpec

SCHEMA = Schema([
    Field("id", np.int64),
    Field("image", np.uint8, (2, 2), "ndarray"),
    Field("label", str),
])


def _row(i):
    return {"id": i, "image": np.full((2, 2), i, np.uint8), "label": f"l{i % 3}"}


@pytest.fixture(params=["mem", "local"])
def dataset(request, tmp_path):
    """24 rows in 2 files of 3 row groups, on mem:// or a local directory."""
    url = (f"mem://parquet-transform-{request.node.name}/ds" if request.param == "mem"
           else str(tmp_path / "ds"))
    write_dataset(url, SCHEMA, (_row(i) for i in range(24)), row_group_size=4,
                  rows_per_file=12)
    return url


def test_two_epochs_yield_every_row_twice(dataset):
    ids = [r["id"] for r in RowReader(dataset, num_epochs=2)]
    assert ids == list(range(24)) * 2


def test_shuffled_epochs_differ_and_each_holds_every_row(dataset):
    ids = [r["id"] for r in RowReader(dataset, num_epochs=2, shuffle=True, seed=3)]
    first, second = ids[:24], ids[24:]
    assert sorted(first) == sorted(second) == list(range(24))
    assert first != second


def test_epochs_follow_set_epoch(dataset):
    reader = RowReader(dataset, shuffle=True, seed=3)
    reader.set_epoch(1)
    second_epoch = [r["id"] for r in reader]
    both = [r["id"] for r in RowReader(dataset, num_epochs=2, shuffle=True, seed=3)]
    assert both[24:] == second_epoch


def test_batches_over_two_epochs_cover_every_row_twice(dataset):
    batches = list(BatchReader(dataset, batch_size=5, num_epochs=2, shuffle=True))
    ids = np.concatenate([b["id"] for b in batches])
    assert sorted(ids.tolist()) == sorted(list(range(24)) * 2)
    assert [len(b["id"]) for b in batches] == [5] * 9 + [3]


def test_endless_reader_keeps_going(dataset):
    reader = iter(RowReader(dataset, num_epochs=None))
    ids = [next(reader)["id"] for _ in range(60)]
    assert ids == (list(range(24)) * 3)[:60]


def test_endless_reader_of_no_rows_stops(dataset):
    assert list(RowReader(dataset, num_epochs=None, predicate=in_set({-1}, "id"))) == []


def test_num_epochs_below_one_is_a_value_error(dataset):
    with pytest.raises(ValueError, match="num_epochs"):
        RowReader(dataset, num_epochs=0)


def _row_func(row):
    row["double"] = row["image"].astype(np.int32) * 2
    return row


SPEC = TransformSpec(_row_func, edit_fields=[("double", np.int32, (2, 2), False)],
                     removed_fields=["label"])


def test_row_transform_edits_and_removes_fields(dataset):
    rows = list(RowReader(dataset, transform_spec=SPEC))
    assert sorted(rows[5]) == ["double", "id", "image"]
    np.testing.assert_array_equal(rows[5]["double"], np.full((2, 2), 10, np.int32))


def test_output_schema_reflects_the_edits(dataset):
    reader = RowReader(dataset, transform_spec=SPEC)
    assert list(reader.output_schema.fields) == ["id", "image", "double"]
    assert reader.output_schema.fields["double"].shape == (2, 2)
    assert list(reader.schema.fields) == ["id", "image", "label"]


def test_selected_fields_choose_and_order_the_output(dataset):
    spec = TransformSpec(selected_fields=["label", "id"])
    reader = RowReader(dataset, transform_spec=spec)
    assert list(next(iter(reader))) == ["label", "id"]
    assert list(reader.output_schema.fields) == ["label", "id"]


def test_selecting_a_missing_field_is_a_value_error(dataset):
    with pytest.raises(ValueError, match=r"selected_fields \['nope'\]"):
        RowReader(dataset, transform_spec=TransformSpec(selected_fields=["nope"]))


def _frame_func(frame):
    frame["id_plus"] = frame["id"] + 100
    frame["flipped"] = [image[::-1] for image in frame["image"]]
    return frame[frame["label"] != "l0"]


def test_batch_transform_gets_a_dataframe(dataset):
    spec = TransformSpec(_frame_func, edit_fields=[("id_plus", np.int64, (), False)],
                         removed_fields=["label"])
    batches = list(BatchReader(dataset, batch_size=6, transform_spec=spec))
    first = batches[0]
    assert sorted(first) == ["flipped", "id", "id_plus", "image"]
    assert first["id"].tolist() == [1, 2, 4, 5]
    assert first["id_plus"].tolist() == [101, 102, 104, 105]
    assert first["image"].shape == first["flipped"].shape == (4, 2, 2)
    np.testing.assert_array_equal(first["image"][0], np.full((2, 2), 1, np.uint8))


def test_batch_and_row_transforms_agree_on_selected_fields(dataset):
    spec = TransformSpec(selected_fields=["id"])
    rows = [r["id"] for r in RowReader(dataset, transform_spec=spec)]
    batches = list(BatchReader(dataset, batch_size=7, transform_spec=spec))
    assert all(list(b) == ["id"] for b in batches)
    assert np.concatenate([b["id"] for b in batches]).tolist() == rows


def test_a_row_func_must_return_a_dict(dataset):
    with pytest.raises(TypeError, match="must return a dict"):
        list(RowReader(dataset, transform_spec=TransformSpec(lambda row: None)))


def test_a_batch_func_must_return_a_dataframe(dataset):
    spec = TransformSpec(lambda frame: frame.to_dict())
    with pytest.raises(TypeError, match="pandas.DataFrame"):
        list(BatchReader(dataset, transform_spec=spec))


class _ZlibArrays:
    """A user codec: arrays as zlib-compressed raw bytes of the field's dtype and shape."""

    takes_arrays = True

    def encode(self, field, value):
        return zlib.compress(value.tobytes())

    def decode(self, field, stored):
        return np.frombuffer(zlib.decompress(stored), field.dtype).reshape(field.shape)


@pytest.fixture
def lz4_codec():
    """Registers ``lz4`` (zlib underneath: the lz4 package is not a dependency) for a test."""
    register_codec("lz4", _ZlibArrays())
    yield "lz4"
    unregister_codec("lz4")


CODEC_SCHEMA_JSON = json.dumps([
    {"name": "id", "dtype": "<i8", "shape": [], "codec": "scalar", "nullable": False},
    {"name": "mask", "dtype": "|u1", "shape": [3, 3], "codec": "lz4", "nullable": False}])


@pytest.fixture
def lz4_dataset(tmp_path):
    """A file whose stored schema names codec lz4, written without pfio's writer (as another
    process that had the codec would have)."""
    cells = [zlib.compress(np.full((3, 3), i, np.uint8).tobytes()) for i in range(6)]
    table = pa.table({"id": pa.array(range(6), pa.int64()), "mask": pa.array(cells)})
    table = table.replace_schema_metadata({"pfio.schema": CODEC_SCHEMA_JSON})
    url = str(tmp_path / "lz4")
    (tmp_path / "lz4").mkdir()
    pq.write_table(table, f"{url}/part-00000.parquet", row_group_size=3)
    return url


def test_an_unregistered_codec_is_a_clear_error(lz4_dataset):
    with pytest.raises(ValueError, match=r"unknown codec 'lz4'; known codecs: \['jpeg', "
                                         r"'ndarray', 'npz', 'png', 'scalar'\]"):
        RowReader(lz4_dataset)


def test_a_registered_codec_decodes_a_stored_schema(lz4_dataset, lz4_codec):
    rows = list(RowReader(lz4_dataset))
    np.testing.assert_array_equal(rows[4]["mask"], np.full((3, 3), 4, np.uint8))
    batch = next(iter(BatchReader(lz4_dataset, batch_size=6)))
    assert batch["mask"].shape == (6, 3, 3)


def test_a_registered_codec_round_trips_through_the_writer(tmp_path, lz4_codec):
    schema = Schema([Field("id", np.int64), Field("mask", np.uint8, (3, 3), lz4_codec)])
    url = f"mem://parquet-codec-{tmp_path.name}/ds"
    write_dataset(url, schema, ({"id": i, "mask": np.eye(3, dtype=np.uint8) * i}
                                for i in range(5)))
    rows = list(RowReader(url))
    np.testing.assert_array_equal(rows[3]["mask"], np.eye(3, dtype=np.uint8) * 3)


def test_the_shape_is_checked_before_a_user_codec_encodes(lz4_codec):
    field = Field("mask", np.uint8, (3, 3), lz4_codec)
    with pytest.raises(ValueError, match="does not match"):
        field.encode(np.zeros((2, 2)))


def test_registering_a_taken_name_needs_replace(lz4_codec):
    with pytest.raises(ValueError, match="registered already"):
        register_codec("lz4", _ZlibArrays())
    register_codec("lz4", _ZlibArrays(), replace=True)


def test_built_in_codecs_cannot_be_replaced():
    with pytest.raises(ValueError, match="built in"):
        register_codec("png", _ZlibArrays(), replace=True)
    with pytest.raises(ValueError, match="built in"):
        unregister_codec("scalar")


def test_a_codec_needs_encode_and_decode():
    with pytest.raises(TypeError, match="encode"):
        register_codec("broken", object())


def test_a_field_naming_an_unknown_codec_is_a_value_error():
    with pytest.raises(ValueError, match="field 'x': unknown codec 'nope'"):
        Field("x", np.uint8, (2,), "nope")
