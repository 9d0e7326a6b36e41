"""Fixed-shape arrays as Arrow list columns, decoded a column at a time by the batch reader."""

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pfio
from pfio.integrations.parquet import BatchReader, Field, RowReader, Schema, write_dataset
from pfio.integrations.parquet.arrays import dense
from pfio.integrations.parquet.schema import METADATA_KEY

ROWS = 23


def _values(dtype, shape, i):
    return (np.arange(int(np.prod(shape))) + i).reshape(shape).astype(dtype)


def _write(url, dtype, shape, nullable=False, rows=ROWS):
    schema = Schema([Field("id", np.int64), Field("a", dtype, shape, "ndarray", nullable)])
    write_dataset(url, schema, ({"id": i, "a": _values(dtype, shape, i)} for i in range(rows)),
                  row_group_size=5, rows_per_file=10)
    return url


def _url(request, name="ds"):
    return f"mem://parquet-{request.node.name}/{name}"


def _write_table(url, table, row_group_size=4):
    with pfio.open_url(url, "wb") as f:
        pq.write_table(table, f, row_group_size=row_group_size)
    return url


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8])
@pytest.mark.parametrize("shape", [(4,), (2, 3)])
def test_rows_and_batches_read_back_what_was_written(request, dtype, shape):
    url = _write(_url(request), dtype, shape)
    rows = list(RowReader(url))
    batches = list(BatchReader(url, batch_size=7))  # batches cut across row groups and files
    expected = np.stack([_values(dtype, shape, i) for i in range(ROWS)])
    np.testing.assert_array_equal(np.stack([r["a"] for r in rows]), expected)
    assert [b["a"].shape for b in batches] == [(7, *shape)] * 3 + [(2, *shape)]
    np.testing.assert_array_equal(np.concatenate([b["a"] for b in batches]), expected)
    assert {b["a"].dtype for b in batches} == {rows[0]["a"].dtype} == {np.dtype(dtype)}


@pytest.mark.parametrize("shape", [(4,), (2, 3)])
def test_fixed_shapes_are_stored_as_nested_fixed_size_lists(request, shape):
    url = _write(_url(request), np.float32, shape)
    with pfio.open_url(f"{url}/part-00000.parquet", "rb") as f:
        stored = pq.ParquetFile(f).schema_arrow.field("a").type
    expected = pa.float32()
    for dim in reversed(shape):
        expected = pa.list_(expected, dim)
    assert stored == expected


def test_shuffled_batches_equal_the_rows_they_hold(request):
    url = _write(_url(request), np.float32, (2, 3))
    for batch in BatchReader(url, batch_size=6, shuffle=True, seed=3):
        for i, row_id in enumerate(batch["id"]):
            np.testing.assert_array_equal(batch["a"][i], _values(np.float32, (2, 3), row_id))


def test_empty_shapes_are_stored_as_npy_bytes(request):
    url = _write(_url(request), np.float32, (0,))
    assert Field("a", np.float32, (0,), "ndarray").arrow_type() == pa.binary()
    assert next(iter(BatchReader(url, batch_size=4)))["a"].shape == (4, 0)
    assert next(iter(RowReader(url)))["a"].shape == (0,)


def test_null_rows_make_a_batch_a_list_with_none(request):
    schema = Schema([Field("a", np.float32, (4,), "ndarray", nullable=True)])
    url = _url(request)
    write_dataset(url, schema, [{"a": np.ones(4)}, {"a": None}, {"a": np.zeros(4)}])
    batch = next(iter(BatchReader(url, batch_size=3)))["a"]
    assert isinstance(batch, list) and batch[1] is None
    np.testing.assert_array_equal(batch[2], np.zeros(4, np.float32))
    assert [r["a"] is None for r in RowReader(url)] == [False, True, False]


def test_rows_get_writable_arrays(request):
    url = _write(_url(request), np.float32, (4,))
    row = next(iter(RowReader(url)))
    row["a"][0] = 42.0
    assert row["a"][0] == 42.0


def test_an_old_dataset_of_npy_bytes_still_reads(request):
    arrays = [_values(np.float32, (4,), i) for i in range(6)]

    def npy(array):
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        return buffer.getvalue()

    fields = [{"name": "a", "dtype": "<f4", "shape": [4], "codec": "ndarray", "nullable": False}]
    schema = pa.schema([pa.field("a", pa.binary(), nullable=False)],
                       metadata={METADATA_KEY: json.dumps(fields)})
    table = pa.Table.from_arrays([pa.array([npy(a) for a in arrays], pa.binary())],
                                 schema=schema)
    url = _write_table(_url(request, "old.parquet"), table)
    np.testing.assert_array_equal(next(iter(BatchReader(url, batch_size=6)))["a"],
                                  np.stack(arrays))
    np.testing.assert_array_equal(list(RowReader(url))[5]["a"], arrays[5])


def test_equal_length_arrow_lists_decode_to_one_array(request):
    values = [[float(i), i + 0.5, i + 0.25] for i in range(10)]
    table = pa.table({"v": pa.array(values, pa.list_(pa.float32()))})
    url = _write_table(_url(request, "spark.parquet"), table)
    batches = list(BatchReader(url, batch_size=3))  # slices of row groups of 4
    assert [b["v"].shape for b in batches] == [(3, 3)] * 3 + [(1, 3)]
    np.testing.assert_array_equal(np.concatenate([b["v"] for b in batches]),
                                  np.array(values, np.float32))


def test_unequal_length_arrow_lists_come_back_as_an_object_array(request):
    table = pa.table({"v": pa.array([[1.0], [2.0, 3.0], [4.0]], pa.list_(pa.float64()))})
    url = _write_table(_url(request, "ragged.parquet"), table)
    column = next(iter(BatchReader(url, batch_size=3)))["v"]
    assert column.dtype == object and [len(v) for v in column] == [1, 2, 1]


def test_lists_with_null_elements_are_not_made_dense(request):
    table = pa.table({"v": pa.array([[1.0, None], [2.0, 3.0]], pa.list_(pa.float64()))})
    url = _write_table(_url(request, "nulls.parquet"), table)
    assert next(iter(BatchReader(url, batch_size=2)))["v"].dtype == object


def test_foreign_fixed_size_lists_decode_to_one_array(request):
    table = pa.table({"v": pa.array([[1, 2], [3, 4], [5, 6]], pa.list_(pa.int16(), 2))})
    url = _write_table(_url(request, "fixed.parquet"), table)
    column = next(iter(BatchReader(url, batch_size=3)))["v"]
    np.testing.assert_array_equal(column, np.array([[1, 2], [3, 4], [5, 6]], np.int16))


def test_stored_shape_that_contradicts_the_schema_is_an_error(request):
    fields = [{"name": "a", "dtype": "<f4", "shape": [4], "codec": "ndarray", "nullable": False}]
    schema = pa.schema([pa.field("a", pa.list_(pa.float32(), 3))],
                       metadata={METADATA_KEY: json.dumps(fields)})
    table = pa.Table.from_arrays([pa.array([[1, 2, 3]], pa.list_(pa.float32(), 3))],
                                 schema=schema)
    url = _write_table(_url(request, "bad.parquet"), table)
    with pytest.raises(ValueError, match=r"shape \(3,\) do not match the schema's \(4,\)"):
        next(iter(BatchReader(url, batch_size=1)))


def test_flat_rows_take_a_schema_shape_of_more_dimensions_in_row_major_order(request):
    """What Spark writes for a field of shape (2, 3) when given a flat ``array<float>``."""
    fields = [{"name": "a", "dtype": "<f4", "shape": [2, 3], "codec": "ndarray",
               "nullable": False}]
    schema = pa.schema([pa.field("a", pa.list_(pa.float32()))],
                       metadata={METADATA_KEY: json.dumps(fields)})
    rows = [list(range(6)), list(range(6, 12))]
    table = pa.Table.from_arrays([pa.array(rows, pa.list_(pa.float32()))], schema=schema)
    url = _write_table(_url(request, "flat.parquet"), table)
    column = next(iter(BatchReader(url, batch_size=2)))["a"]
    np.testing.assert_array_equal(column, np.arange(12, dtype=np.float32).reshape(2, 2, 3))


def test_dense_honours_the_offsets_of_slices():
    flat = pa.array(np.arange(12, dtype=np.float32))
    fixed = pa.FixedSizeListArray.from_arrays(pa.FixedSizeListArray.from_arrays(flat, 2), 3)
    np.testing.assert_array_equal(dense(fixed.slice(1, 1)), np.arange(6, 12).reshape(1, 3, 2))
    ragged = pa.array([[0.0], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], pa.list_(pa.float64()))
    np.testing.assert_array_equal(dense(ragged.slice(1)), [[1, 2], [3, 4], [5, 6]])
    assert dense(ragged) is None
    chunked = pa.chunked_array([ragged.slice(1, 2), ragged.slice(3)])
    np.testing.assert_array_equal(dense(chunked), [[1, 2], [3, 4], [5, 6]])


def test_decode_false_leaves_lists_undecoded(request):
    url = _write(_url(request), np.float32, (4,))
    column = next(iter(BatchReader(url, batch_size=3, decode=False)))["a"]
    assert column.dtype == object


def test_a_dataset_without_rows_has_the_fixed_size_list_type(request):
    url = _write(_url(request), np.float32, (2, 3), rows=0)
    reader = RowReader(url)
    assert list(reader) == []
    with pfio.open_url(reader.files[0], "rb") as f:
        assert pq.ParquetFile(f).schema_arrow.field("a").type == pa.list_(
            pa.list_(pa.float32(), 3), 2)


def test_byte_swapped_dtypes_stay_npy_bytes(request):
    url = _write(_url(request), np.dtype(">f4"), (4,))
    assert Field("a", ">f4", (4,), "ndarray").arrow_type() == pa.binary()
    np.testing.assert_array_equal(next(iter(BatchReader(url, batch_size=2)))["a"][1],
                                  _values(np.float32, (4,), 1))
