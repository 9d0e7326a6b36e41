"""Hive-partitioned Parquet stores (``root/key=value/file.parquet``), written by pyarrow."""

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import pfio
from pfio.integrations.parquet import BatchReader, RowReader

ROWS = 30


def _table():
    x = list(range(ROWS))
    return pa.table({"x": x, "part": ["abc"[i % 3] for i in x], "n": [i % 2 for i in x]})


def _copy_tree(local: Path, url: str) -> None:
    """Upload the files pyarrow wrote under ``local`` to ``url`` through pfio."""
    for folder, _, names in os.walk(local):
        for name in names:
            relative = os.path.relpath(os.path.join(folder, name), local)
            with open(os.path.join(folder, name), "rb") as src, \
                    pfio.open_url(f"{url}/{relative}", "wb") as dst:
                dst.write(src.read())


def _store(request, tmp_path, table, partition_cols, where="local"):
    """``table`` written by pyarrow's ``write_to_dataset`` and put on ``where``."""
    local = tmp_path / "hive"
    pq.write_to_dataset(table, str(local), partition_cols=partition_cols, row_group_size=4)
    if where == "local":
        return str(local)
    if where == "mem":
        url = f"mem://parquet-{request.node.name}/hive"
    else:
        request.getfixturevalue("s3_env")
        url = f"s3://{request.getfixturevalue('s3_bucket')}/hive"
    _copy_tree(local, url)
    return url


@pytest.fixture(params=["local", "mem", "s3"])
def hive(request, tmp_path):
    """30 rows partitioned by ``part`` (a, b, c) and ``n`` (0, 1), on local, mem:// or S3."""
    return _store(request, tmp_path, _table(), ["part", "n"], request.param)


def test_partition_columns_appear_with_each_rows_values(hive):
    rows = list(RowReader(hive))
    assert sorted(r["x"] for r in rows) == list(range(ROWS))
    assert all(r["part"] == "abc"[r["x"] % 3] and r["n"] == r["x"] % 2 for r in rows)


def test_partition_types_match_pyarrows_inference(hive, tmp_path):
    reader = RowReader(hive)
    local = _store(None, tmp_path / "ref", _table(), ["part", "n"])
    inferred = ds.dataset(local, partitioning="hive").schema
    assert reader.partitions.types == {"part": inferred.field("part").type,
                                       "n": inferred.field("n").type}


def test_columns_select_a_partition_column(hive):
    rows = list(RowReader(hive, columns=["x", "part"]))
    assert {tuple(sorted(r)) for r in rows} == {("part", "x")}
    assert all(r["part"] == "abc"[r["x"] % 3] for r in rows)


def test_only_partition_columns_still_yield_every_row(hive):
    parts = sorted(r["part"] for r in RowReader(hive, columns=["part"]))
    assert parts == sorted("abc"[i % 3] for i in range(ROWS))


def test_filters_on_a_partition_column(hive):
    xs = sorted(r["x"] for r in RowReader(hive, filters=[("part", "=", "b"), ("n", "=", 1)]))
    assert xs == [i for i in range(ROWS) if i % 3 == 1 and i % 2 == 1]


def test_sharding_reads_every_row_once(hive):
    xs = []
    for rank in range(3):
        xs += [r["x"] for r in RowReader(hive, rank=rank, world_size=3, shuffle=True, seed=1)]
    assert sorted(xs) == list(range(ROWS))


def test_batches_hold_partition_columns_as_arrays(hive):
    batch = next(iter(BatchReader(hive, batch_size=ROWS)))
    assert batch["n"].dtype == np.int32
    assert batch["part"].tolist() == ["abc"[x % 3] for x in batch["x"]]
    assert batch["n"].tolist() == [x % 2 for x in batch["x"]]


def test_a_partition_key_that_is_a_file_column_is_an_error(tmp_path):
    folder = tmp_path / "ds" / "x=1"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1, 2]}), str(folder / "f.parquet"))
    with pytest.raises(ValueError, match=r"partition keys \['x'\] are also columns"):
        RowReader(str(tmp_path / "ds"))


def test_null_and_percent_encoded_values(tmp_path):
    table = pa.table({"x": [0, 1, 2], "tag": ["a b/c", None, "a b/c"]})
    url = _store(None, tmp_path, table, ["tag"])
    assert {r["x"]: r["tag"] for r in RowReader(url)} == {0: "a b/c", 1: None, 2: "a b/c"}


def test_values_outside_int32_are_strings_as_in_pyarrow(tmp_path):
    url = _store(None, tmp_path, pa.table({"x": [0, 1], "big": [1, 2**40]}), ["big"])
    assert {r["x"]: r["big"] for r in RowReader(url)} == {0: "1", 1: str(2**40)}


def test_a_key_missing_from_some_paths_is_null_there(tmp_path):
    for folder, value in (("k=7", 1), ("plain", 2)):
        (tmp_path / "ds" / folder).mkdir(parents=True)
        pq.write_table(pa.table({"x": [value]}), str(tmp_path / "ds" / folder / "f.parquet"))
    rows = {r["x"]: r["k"] for r in RowReader(str(tmp_path / "ds"))}
    assert rows == {1: 7, 2: None}


def test_a_single_file_has_no_partition_columns(tmp_path):
    url = _store(None, tmp_path, _table(), ["part"])
    first = sorted(str(p) for p in Path(url).rglob("*.parquet"))[0]
    assert set(next(iter(RowReader(first)))) == {"x", "n"}


def test_a_pickled_reader_keeps_the_partition_columns(tmp_path):
    import pickle

    url = _store(None, tmp_path, _table(), ["part", "n"])
    copy = pickle.loads(pickle.dumps(RowReader(url, columns=["x", "n"])))
    assert sorted((r["x"], r["n"]) for r in copy) == [(i, i % 2) for i in range(ROWS)]
