"""Ray Data over pfio (``pfio.integrations.ray``): the pyarrow filesystem, read_dataset and
write_dataset, on local directories and on the moto S3 server of tests/conftest.py.

One local Ray cluster for the module (2 CPUs, no dashboard); its workers get the test
server's settings through ``runtime_env``.
"""

from __future__ import annotations

import logging
import pickle

import cv2
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ray = pytest.importorskip("ray")

import pfio  # noqa: E402
from pfio.integrations.parquet import BatchReader, Field, Schema  # noqa: E402
from pfio.integrations.parquet import write_dataset as write_pfio  # noqa: E402
from pfio.integrations.ray import (  # noqa: E402
    PfioHandler,
    filesystem,
    read_dataset,
    write_dataset,
)

pytestmark = pytest.mark.ray

SCHEMA = Schema([
    Field("id", np.int64),
    Field("vec", np.float32, (2, 3), "ndarray"),
    Field("image", np.uint8, (4, 4, 3), "png"),
    Field("ragged", np.int16, (None,), "ndarray"),
    Field("name", str),
])


def _row(i: int) -> dict:
    return {"id": i, "vec": np.arange(6, dtype=np.float32).reshape(2, 3) + i,
            "image": np.full((4, 4, 3), i, np.uint8), "ragged": np.arange(i % 3, dtype=np.int16),
            "name": f"row{i}"}


@pytest.fixture(scope="module")
def cluster(s3_server):
    """A local Ray cluster whose workers see the test server's settings."""
    env = {**s3_server.credentials, "S3_ENDPOINT": s3_server.endpoint}
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
             runtime_env={"env_vars": env})
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture
def local_dataset(tmp_path):
    url = str(tmp_path / "in")
    write_pfio(url, SCHEMA, (_row(i) for i in range(12)), row_group_size=4, rows_per_file=8)
    return url


def _all(ds, **options) -> dict[str, np.ndarray]:
    """Every row of ``ds`` as one numpy batch, sorted by ``id``."""
    batch = next(iter(ds.iter_batches(batch_size=None, batch_format="numpy", **options)))
    order = np.argsort(batch["id"])
    return {name: values[order] for name, values in batch.items()}


# -- the filesystem -----------------------------------------------------------------------


@pytest.mark.parametrize("path, normal", [
    ("s3://bucket/key", "s3/bucket/key"),
    ("pfio://s3/bucket/key/", "s3/bucket/key"),
    ("s3/bucket/key", "s3/bucket/key"),
    ("/abs/dir/x.parquet", "file/abs/dir/x.parquet"),
    ("file:///abs/dir/x.parquet", "file/abs/dir/x.parquet"),
    ("mem://store/x", "mem/store/x"),
    ("hdfs:///user/x", "hdfs//user/x"),
])
def test_paths_normalise_to_a_form_that_keeps_the_scheme(path, normal):
    assert filesystem().normalize_path(path) == normal


def test_filesystem_pickles_with_its_options():
    fs = pickle.loads(pickle.dumps(filesystem(endpoint="http://127.0.0.1:1")))
    assert fs.type_name == "py::pfio"
    assert fs.handler.options == {"endpoint": "http://127.0.0.1:1"}


def test_pyarrow_reads_and_lists_local_files(tmp_path):
    pq.write_table(pa.table({"a": [1, 2, 3]}), tmp_path / "t.parquet")
    fs = filesystem()
    assert pq.read_table(str(tmp_path / "t.parquet"), filesystem=fs)["a"].to_pylist() == [1, 2, 3]
    infos = fs.get_file_info(pa.fs.FileSelector(str(tmp_path)))
    assert [i.path for i in infos] == [f"file{tmp_path}/t.parquet"]


def test_pyarrow_reads_some_columns_of_many_row_groups(tmp_path):
    table = pa.table({f"c{i}": np.arange(4000, dtype=np.int64) * i for i in range(6)})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=500)
    got = pq.read_table(str(tmp_path / "t.parquet"), columns=["c1", "c4"], filesystem=filesystem())
    assert got.equals(table.select(["c1", "c4"]))


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        filesystem().open_input_file(str(tmp_path / "missing.parquet"))


def _chunk(parquet: pq.ParquetFile, group: int, column: int) -> tuple[int, int]:
    """(start, size) of a column chunk of ``parquet``."""
    chunk = parquet.metadata.row_group(group).column(column)
    start = chunk.data_page_offset if chunk.dictionary_page_offset is None else min(
        chunk.data_page_offset, chunk.dictionary_page_offset)
    return start, chunk.total_compressed_size


def _write_s3_table(url: str, columns: int, groups: int) -> pa.Table:
    table = pa.table({f"c{i}": np.arange(10_000 * groups, dtype=np.float64) * (i + 1)
                      for i in range(columns)})
    with pfio.open_url(url, "wb") as f:
        pq.write_table(table, f, row_group_size=10_000, compression="none",
                       use_dictionary=False)
    return table


def test_reading_a_column_fetches_its_other_chunks_ahead(s3_env, s3_bucket, s3_requests):
    url = f"s3://{s3_bucket}/t.parquet"
    table = _write_s3_table(url, columns=4, groups=2)
    with pfio.from_url(f"s3://{s3_bucket}") as fs:
        log = s3_requests(fs)
        with PfioHandler().open_input_file(url) as f:
            parquet = pq.ParquetFile(f, pre_buffer=True)
            second = parquet.read_row_group(1, columns=["c2"])
            first = parquet.read_row_group(0, columns=["c2"])
    assert second["c2"].to_pylist() == table["c2"].to_pylist()[10_000:]
    assert first["c2"].to_pylist() == table["c2"].to_pylist()[:10_000]
    # the opening GET reads the tail (the footer); the chunk of row group 1 is one ranged
    # GET, after which the chunk of row group 0 of the same column is fetched ahead
    ranges = [f"bytes={s}-{s + n - 1}" for s, n in (_chunk(parquet, 1, 2), _chunk(parquet, 0, 2))]
    assert [(method, rng if not rng.startswith("bytes=-") else "tail")
            for method, _, rng in log] == [("GET", "tail"), ("GET", ranges[0]),
                                           ("GET", ranges[1])]


def test_reads_across_pieces_fetched_ahead_get_the_right_bytes(s3_env, s3_bucket, s3_requests,
                                                               tmp_path):
    url = f"s3://{s3_bucket}/t.parquet"
    _write_s3_table(url, columns=1, groups=4)
    with pfio.open_url(url, "rb") as f:
        whole = f.read()
    with pfio.from_url(f"s3://{s3_bucket}") as fs:
        log = s3_requests(fs)
        with PfioHandler().open_input_file(url) as f:
            parquet = pq.ParquetFile(f)
            start, size = _chunk(parquet, 0, 0)
            assert f.read_at(size, start) == whole[start:start + size]
            # the chunks of row groups 1 to 3 come in one read ahead; reads inside it
            end = _chunk(parquet, 3, 0)[0] + _chunk(parquet, 3, 0)[1]
            middle = _chunk(parquet, 1, 0)[0] + 100
            assert f.read_at(middle - start - size, start + size) == whole[start + size:middle]
            assert f.read_at(end - middle, middle) == whole[middle:end]
    assert len(log) == 3  # the tail, row group 0's chunk, the read ahead


def test_random_access_to_a_file_that_is_not_parquet(s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/notes.txt"
    with pfio.open_url(url, "wb") as f:
        f.write(b"0123456789" * 10)
    with PfioHandler().open_input_file(url) as f:
        assert f.size() == 100
        assert f.read_at(5, 42) == b"23456"


def test_ray_reads_and_writes_parquet_on_s3(cluster, s3_env, s3_bucket):
    fs = filesystem()
    ray.data.range(30, override_num_blocks=3).write_parquet(f"s3://{s3_bucket}/r", filesystem=fs)
    with pfio.from_url(f"s3://{s3_bucket}/r") as store:
        assert len([n for n in store.list() if n.endswith(".parquet")]) == 3
    back = ray.data.read_parquet(f"s3://{s3_bucket}/r", filesystem=fs)
    assert sorted(row["id"] for row in back.take_all()) == list(range(30))


def test_ray_reads_and_writes_through_the_fsspec_protocol(cluster, s3_env, s3_bucket):
    """The call shape of fsspec users (``filesystem=fsspec.filesystem("pfio")``, paths
    ``pfio://s3/...``) works too, from the first use in every worker."""
    import fsspec

    fs = fsspec.filesystem("pfio")
    url = f"pfio://s3/{s3_bucket}/via-fsspec"
    ray.data.range(20, override_num_blocks=2).write_parquet(url, filesystem=fs)
    back = ray.data.read_parquet(url, filesystem=fs)
    assert sorted(row["id"] for row in back.take_all()) == list(range(20))


def test_ray_reads_local_parquet(cluster, tmp_path):
    pq.write_table(pa.table({"a": list(range(10))}), tmp_path / "t.parquet")
    ds = ray.data.read_parquet(str(tmp_path), filesystem=filesystem())
    assert sorted(row["a"] for row in ds.take_all()) == list(range(10))


@pytest.mark.parametrize("place", ["local", "s3"])
def test_ray_reads_images(cluster, place, tmp_path, s3_env, s3_bucket):
    url = str(tmp_path) if place == "local" else f"s3://{s3_bucket}/images"
    with pfio.from_url(url) as fs:
        for i in range(3):
            ok, png = cv2.imencode(".png", np.full((5, 6, 3), 10 * i, np.uint8))
            assert ok
            with fs.open(f"img_{i}.png", "wb") as f:
                f.write(png.tobytes())
    ds = ray.data.read_images(url, filesystem=filesystem(), include_paths=True)
    rows = sorted(ds.take_all(), key=lambda row: row["path"])
    assert [row["image"].shape for row in rows] == [(5, 6, 3)] * 3
    assert [int(row["image"][0, 0, 0]) for row in rows] == [0, 10, 20]


# -- read_dataset -------------------------------------------------------------------------


def test_read_dataset_decodes_arrays_and_images(cluster, local_dataset):
    got = _all(read_dataset(local_dataset))
    assert got["id"].tolist() == list(range(12))
    assert got["vec"].shape == (12, 2, 3) and got["vec"].dtype == np.float32
    np.testing.assert_array_equal(got["vec"], np.stack([_row(i)["vec"] for i in range(12)]))
    assert got["image"].shape == (12, 4, 4, 3) and got["image"].dtype == np.uint8
    assert got["image"][:, 0, 0, 0].tolist() == list(range(12))
    assert [r.tolist() for r in got["ragged"]] == [list(range(i % 3)) for i in range(12)]
    assert got["name"].tolist() == [f"row{i}" for i in range(12)]


def test_read_dataset_without_decode_gives_stored_columns(cluster, local_dataset):
    got = _all(read_dataset(local_dataset, columns=["id", "image", "vec"], decode=False))
    assert sorted(got) == ["id", "image", "vec"]
    assert isinstance(got["image"][0], bytes) and got["image"][0].startswith(b"\x89PNG")
    assert np.asarray(got["vec"][3].tolist(), np.float32).tolist() == _row(3)["vec"].tolist()


def test_read_dataset_reads_only_the_columns_asked_for(cluster, local_dataset):
    got = _all(read_dataset(local_dataset, columns=["id", "vec"]))
    assert sorted(got) == ["id", "vec"]
    assert got["vec"].shape == (12, 2, 3)


def test_iter_torch_batches_gives_tensors(cluster, local_dataset):
    import torch

    ds = read_dataset(local_dataset, columns=["id", "vec", "image"])
    batches = list(ds.iter_torch_batches(batch_size=5))
    assert [len(b["id"]) for b in batches] == [5, 5, 2]
    first = batches[0]
    assert first["vec"].shape == (5, 2, 3) and first["vec"].dtype == torch.float32
    assert first["image"].shape == (5, 4, 4, 3) and first["image"].dtype == torch.uint8


def test_read_dataset_keeps_nulls_of_arrays(cluster, tmp_path):
    schema = Schema([Field("id", np.int64), Field("vec", np.float32, (2,), "ndarray",
                                                   nullable=True)])
    url = str(tmp_path / "nulls")
    write_pfio(url, schema, [{"id": 0, "vec": np.ones(2)}, {"id": 1, "vec": None}])
    got = _all(read_dataset(url))
    assert got["vec"][0].tolist() == [1.0, 1.0] and got["vec"][1] is None


def test_read_dataset_of_a_foreign_store_keeps_its_columns(cluster, tmp_path):
    pq.write_table(pa.table({"id": [1, 2], "xs": [[1.0, 2.0], [3.0, 4.0]]}),
                   tmp_path / "foreign.parquet")
    got = _all(read_dataset(str(tmp_path)))
    assert [x.tolist() for x in got["xs"]] == [[1.0, 2.0], [3.0, 4.0]]


def test_read_dataset_of_nothing_is_file_not_found(cluster, tmp_path):
    with pytest.raises(FileNotFoundError):
        read_dataset(str(tmp_path))


# -- write_dataset ------------------------------------------------------------------------


def test_write_dataset_round_trip_on_s3(cluster, s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/out"
    ds = ray.data.from_items([_row(i) for i in range(12)], override_num_blocks=2)
    written = write_dataset(ds, url, SCHEMA, row_group_size=4)
    assert written == [f"{url}/part-00000.parquet", f"{url}/part-00001.parquet"]
    with pfio.from_url(url) as fs:
        assert sorted(fs.list(recursive=True)) == ["part-00000.parquet", "part-00001.parquet"]
    rows = sorted((r for b in BatchReader(url, batch_size=100) for r in _rows(b)),
                  key=lambda r: r["id"])
    assert [r["id"] for r in rows] == list(range(12))
    np.testing.assert_array_equal(rows[5]["image"], _row(5)["image"])
    np.testing.assert_array_equal(rows[5]["vec"], _row(5)["vec"])
    np.testing.assert_array_equal(rows[5]["ragged"], _row(5)["ragged"])
    np.testing.assert_array_equal(_all(read_dataset(url))["vec"],
                                  np.stack([_row(i)["vec"] for i in range(12)]))


def _rows(batch: dict) -> list[dict]:
    return [{k: v[i] for k, v in batch.items()} for i in range(len(batch["id"]))]


def test_write_dataset_stores_the_schema_and_row_groups(cluster, tmp_path):
    url = str(tmp_path / "out")
    ds = ray.data.from_items([_row(i) for i in range(12)], override_num_blocks=1)
    [part] = write_dataset(ds, url, SCHEMA, row_group_size=5)
    metadata = pq.read_metadata(part)
    assert Schema.from_arrow(metadata.schema.to_arrow_schema()).fields == SCHEMA.fields
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [5, 5, 2]


def test_write_dataset_of_read_dataset_round_trips(cluster, tmp_path, local_dataset):
    url = str(tmp_path / "copy")
    write_dataset(read_dataset(local_dataset), url, SCHEMA)
    got = _all(read_dataset(url))
    assert got["id"].tolist() == list(range(12))
    np.testing.assert_array_equal(got["image"], np.stack([_row(i)["image"] for i in range(12)]))
    assert [r.tolist() for r in got["ragged"]] == [list(range(i % 3)) for i in range(12)]


def test_write_dataset_refuses_a_directory_with_a_dataset(cluster, local_dataset):
    with pytest.raises(FileExistsError):
        write_dataset(ray.data.from_items([_row(0)]), local_dataset, SCHEMA)


def test_write_dataset_of_rows_off_the_schema_publishes_nothing(cluster, tmp_path):
    url = str(tmp_path / "bad")
    ds = ray.data.from_items([{"id": 1, "unknown": 2.0}])
    with pytest.raises(Exception, match="do not match the schema") as info:
        write_dataset(ds, url, Schema([Field("id", np.int64)]))
    assert isinstance(info.value, ValueError) or isinstance(info.value.__cause__, ValueError)
    assert list(pfio.from_url(url).list()) == []
