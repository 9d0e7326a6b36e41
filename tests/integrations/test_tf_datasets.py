"""``pfio.integrations.tensorflow.make_dataset``: TFRecord files, webdataset shards and
Parquet datasets written by pfio's writers, read back through real TensorFlow on mem://, a
local directory and S3 (the moto server of tests/conftest.py)."""

import os
import secrets
import zipfile

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tensorflow = pytest.importorskip("tensorflow")
tf = tensorflow

from pfio.integrations.parquet import Field, Schema, write_dataset  # noqa: E402
from pfio.integrations.shards import ShardWriter  # noqa: E402
from pfio.integrations.tensorflow import make_dataset  # noqa: E402
from pfio.integrations.tensorflow.readers import (  # noqa: E402
    NATIVE_CHUNK,
    RECORD_CHUNK,
    REMOTE_BUFFER,
)
from pfio.integrations.tfrecord import TFRecordWriter, make_example  # noqa: E402

SCHEMA = Schema([Field("id", np.int64), Field("x", np.float32, (2, 3), "ndarray"),
                 Field("name", str)])


@pytest.fixture(params=["mem", "local", "s3"])
def root(request, tmp_path):
    """A fresh directory on mem://, the local disk or S3."""
    if request.param == "mem":
        return _mem()
    if request.param == "local":
        (tmp_path / "data").mkdir()
        return str(tmp_path / "data")
    request.getfixturevalue("s3_env")
    return f"s3://{request.getfixturevalue('s3_bucket')}/data"


def _mem():
    return f"mem://tfdata-{secrets.token_hex(4)}/data"


@pytest.fixture
def mem():
    return _mem()


def _example(n):
    return make_example({"id": n, "x": np.full(3, n, np.float32), "name": f"r{n}"})


def _tfrecords(root, files=4, per_file=5, suffix=".tfrecord", compression=None):
    """``files`` TFRecord files of ``per_file`` examples; the examples of each file."""
    written = []
    for f in range(files):
        with TFRecordWriter(f"{root}/train-{f:02d}{suffix}", compression=compression) as w:
            records = [_example(f * per_file + i) for i in range(per_file)]
            for record in records:
                w.write(record)
        written.append(records)
    return written


def _shards(root, count=12, per_shard=3, shape=lambda i: (2, 2)):
    with ShardWriter(f"{root}/shard-%04d.tar", maxcount=per_shard) as sink:
        for i in range(count):
            sink.write({"__key__": f"s{i:04d}", "cls": i, "txt": f"t{i}",
                        "npy": np.full(shape(i), i, np.float32)})
    return sink.shards


def _parquet(root, rows=20, per_file=5, group=2):
    write_dataset(root, SCHEMA, ({"id": i, "x": np.full((2, 3), i, np.float32),
                                  "name": f"n{i}"} for i in range(rows)),
                  row_group_size=group, rows_per_file=per_file)


def _ids(dataset, key="id"):
    return [int(element[key].numpy()) for element in dataset]


def _round_robin(per_file, chunk=1):
    """The order a deterministic interleave over all the files gives, taking ``chunk``
    records of each in turn."""
    chunks = [[records[i:i + chunk] for i in range(0, len(records), chunk)]
              for records in per_file]
    return [record for k in range(max(map(len, chunks))) for c in chunks if k < len(c)
            for record in c[k]]


# -- TFRecord ---------------------------------------------------------------------------------

def test_tfrecords_yield_every_record_in_interleaved_chunks(root):
    written = _tfrecords(root, files=3, per_file=300)
    dataset = make_dataset(root, num_parallel_reads=3, tfrecord_reader="pfio")
    assert [r.numpy() for r in dataset] == _round_robin(written, RECORD_CHUNK)


def test_tfrecords_one_file_at_a_time_keep_the_file_order(mem):
    written = _tfrecords(mem, files=3, per_file=600)  # several chunks per file
    got = [r.numpy() for r in make_dataset(mem, num_parallel_reads=1)]
    assert got == [record for records in written for record in records]


def test_tfrecords_parsed_by_a_tensorflow_spec(mem):
    _tfrecords(mem, files=2, per_file=3)
    features = {"id": tf.io.FixedLenFeature([], tf.int64),
                "x": tf.io.FixedLenFeature([3], tf.float32),
                "name": tf.io.FixedLenFeature([], tf.string)}
    elements = list(make_dataset(mem, features=features, num_parallel_reads=1))
    assert [int(e["id"]) for e in elements] == list(range(6))
    assert [e["name"].numpy() for e in elements] == [f"r{i}".encode() for i in range(6)]
    np.testing.assert_array_equal(elements[4]["x"].numpy(), np.full(3, 4, np.float32))


def test_tfrecords_parsed_by_a_pfio_spec_a_batch_at_a_time(mem):
    _tfrecords(mem, files=2, per_file=5)
    dataset = make_dataset(mem, features={"id": "int64", "x": ("float", (3,)),
                                          "name": "bytes", "w": ("float", (), 0.5)},
                           batch_size=4, num_parallel_reads=1)
    batches = list(dataset)
    assert [b["id"].numpy().tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0]["x"].shape == (4, 3)
    assert batches[2]["w"].numpy().tolist() == [0.5, 0.5]


def test_a_pfio_spec_of_any_length_gives_ragged_tensors(mem):
    with TFRecordWriter(f"{mem}/v.tfrecord") as w:
        for n in range(3):
            w.write(make_example({"v": list(range(n + 1))}))
    dataset = make_dataset(mem, features={"v": ("int64", None)}, batch_size=3)
    (batch,) = list(dataset)
    assert batch["v"].to_list() == [[0], [0, 1], [0, 1, 2]]


def test_filesystem_options_reach_the_listing_and_the_reads(s3_env, s3_bucket, monkeypatch):
    root = f"s3://{s3_bucket}/d"
    written = _tfrecords(root, files=2, per_file=3)
    monkeypatch.delenv("S3_ENDPOINT")  # only the option names the server now
    dataset = make_dataset(root, num_parallel_reads=1, endpoint=s3_env)
    assert [r.numpy() for r in dataset] == written[0] + written[1]


def test_webdataset_and_parquet_refuse_filesystem_options(mem):
    _shards(mem, count=1)
    with pytest.raises(ValueError, match=r"filesystem options \(endpoint\)"):
        make_dataset(mem, format="webdataset", endpoint="http://127.0.0.1:1")
    with pytest.raises(ValueError, match=r"filesystem options \(endpoint\)"):
        make_dataset(mem, format="parquet", endpoint="http://127.0.0.1:1")


@pytest.mark.parametrize("suffix, compression", [(".tfrecord.gz", "gzip"),
                                                 (".tfrecord.zlib", "zlib")])
def test_compressed_tfrecords_are_told_by_name(mem, suffix, compression):
    written = _tfrecords(mem, files=2, per_file=3, suffix=suffix, compression=compression)
    got = [r.numpy() for r in make_dataset(mem, num_parallel_reads=1)]
    assert got == [record for records in written for record in records]


@pytest.mark.parametrize("reader, chunk", [("pfio", RECORD_CHUNK),
                                           ("tensorflow", NATIVE_CHUNK)])
def test_both_tfrecord_readers_give_the_records_in_chunks(tmp_path, reader, chunk):
    written = _tfrecords(str(tmp_path), files=3, per_file=100, suffix=".tfrecord.gz",
                         compression="gzip")
    dataset = make_dataset(str(tmp_path), tfrecord_reader=reader, num_parallel_reads=3)
    assert [r.numpy() for r in dataset] == _round_robin(written, chunk)


def test_tfrecords_in_a_zip_are_read_by_pfio(tmp_path):
    with zipfile.ZipFile(tmp_path / "d.zip", "w") as archive:
        with archive.open("train.tfrecord", "w") as f:
            with TFRecordWriter(str(tmp_path / "plain.tfrecord")) as w:
                w.write(b"a")
                w.write(b"b")
            f.write((tmp_path / "plain.tfrecord").read_bytes())
    source = [str(tmp_path / "d.zip" / "train.tfrecord")]
    assert [r.numpy() for r in make_dataset(source)] == [b"a", b"b"]
    with pytest.raises(ValueError, match="TensorFlow has no filesystem"):
        make_dataset(source, tfrecord_reader="tensorflow")


def test_tfrecords_named_without_a_suffix_need_the_format(mem):
    with TFRecordWriter(f"{mem}/train-00000-of-00001") as w:
        w.write(b"one")
    with pytest.raises(ValueError, match="cannot tell the format"):
        make_dataset(f"{mem}/train-00000-of-00001")
    dataset = make_dataset([f"{mem}/train-00000-of-00001"], format="tfrecord")
    assert [r.numpy() for r in dataset] == [b"one"]


def test_a_corrupt_tfrecord_fails_the_iteration_naming_the_file(mem):
    import pfio

    _tfrecords(mem, files=1, per_file=2)
    with pfio.open_url(f"{mem}/train-00.tfrecord", "rb") as f:
        data = bytearray(f.read())
    data[20] ^= 0xFF  # inside the first record's data
    with pfio.open_url(f"{mem}/train-00.tfrecord", "wb") as f:
        f.write(bytes(data))
    with pytest.raises(tf.errors.OpError, match="train-00.tfrecord"):
        list(make_dataset(mem))


# -- webdataset -------------------------------------------------------------------------------

def test_webdataset_samples_as_dicts_of_tensors(root):
    _shards(root)
    dataset = make_dataset(root, decode="basic", num_parallel_reads=4)
    spec = dataset.element_spec
    assert spec["cls"] == tf.TensorSpec([], tf.int64)
    assert spec["npy"] == tf.TensorSpec([2, 2], tf.float32)
    assert spec["txt"] == spec["__key__"] == spec["__url__"] == tf.TensorSpec([], tf.string)
    samples = list(dataset)
    # 4 shards of 3 samples, one sample of each shard in turn
    assert [int(s["cls"]) for s in samples] == [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]
    for s in samples:
        i = int(s["cls"])
        assert s["__key__"].numpy() == f"s{i:04d}".encode()
        assert s["txt"].numpy() == f"t{i}".encode()
        np.testing.assert_array_equal(s["npy"].numpy(), np.full((2, 2), i, np.float32))


def test_webdataset_fields_stay_bytes_without_decode(mem):
    _shards(mem, count=3)
    samples = list(make_dataset(mem, num_parallel_reads=1))
    assert [s["cls"].numpy() for s in samples] == [b"0", b"1", b"2"]
    assert samples[0]["npy"].dtype == tf.string


def test_an_output_signature_selects_and_casts_fields(mem):
    _shards(mem, count=6)
    signature = {"cls": tf.TensorSpec([], tf.int32),
                 "npy": tf.TensorSpec([None, None], tf.float32)}
    dataset = make_dataset(mem, decode="basic", output_signature=signature, batch_size=6,
                           num_parallel_reads=1)
    (batch,) = list(dataset)
    assert set(batch) == {"cls", "npy"}
    assert batch["cls"].dtype == tf.int32
    assert batch["cls"].numpy().tolist() == [0, 1, 2, 3, 4, 5]


def test_a_sample_that_does_not_fit_the_inferred_signature_fails_naming_it(mem):
    _shards(mem, count=3, per_shard=3, shape=lambda i: (2, 2) if i < 2 else (3, 3))
    dataset = make_dataset(mem, decode="basic")
    with pytest.raises(tf.errors.OpError, match=r"s0002.*shape \(3, 3\)"):
        list(dataset)


def test_a_field_with_no_tensor_form_is_refused_when_the_dataset_is_made(mem):
    with ShardWriter(f"{mem}/j-%04d.tar", maxcount=5) as sink:
        sink.write({"__key__": "a", "json": {"v": [1, [2, 3]]}})
    with pytest.raises(TypeError, match=r"'json'.*no tensor form"):
        make_dataset(mem, decode="basic")


# -- Parquet ----------------------------------------------------------------------------------

def test_parquet_rows_as_dicts_of_tensors(root):
    _parquet(root)
    dataset = make_dataset(root, num_parallel_reads=1)
    assert dataset.element_spec == {"id": tf.TensorSpec([], tf.int64),
                                    "x": tf.TensorSpec([2, 3], tf.float32),
                                    "name": tf.TensorSpec([], tf.string)}
    rows = list(dataset)
    assert _ids(rows) == list(range(20))
    np.testing.assert_array_equal(rows[7]["x"].numpy(), np.full((2, 3), 7, np.float32))
    assert rows[7]["name"].numpy() == b"n7"


def test_parquet_rows_batched(mem):
    _parquet(mem)
    dataset = make_dataset(mem, batch_size=8, num_parallel_reads=1)
    batches = list(dataset)
    assert [b["x"].shape[0] for b in batches] == [8, 8, 4]
    assert batches[0]["x"].shape == (8, 2, 3)
    assert [i for b in batches for i in b["id"].numpy().tolist()] == list(range(20))


def test_parquet_columns_are_selected(mem):
    _parquet(mem)
    dataset = make_dataset(mem, columns=["id"], num_parallel_reads=1)
    assert list(dataset.element_spec) == ["id"]
    assert _ids(dataset) == list(range(20))


# -- order ------------------------------------------------------------------------------------

def test_the_order_is_the_same_for_a_seed(mem):
    _tfrecords(mem, files=8, per_file=2)
    first, second = ([r.numpy() for r in make_dataset(mem, shuffle_files=True, seed=7)]
                     for _ in range(2))
    assert first == second


def test_shuffling_files_changes_the_order_not_the_records(mem):
    written = _tfrecords(mem, files=8, per_file=2)
    plain = [r.numpy() for r in make_dataset(mem, num_parallel_reads=2)]
    shuffled = [r.numpy() for r in make_dataset(mem, shuffle_files=True, seed=1,
                                                num_parallel_reads=2)]
    assert shuffled != plain
    assert sorted(shuffled) == sorted(plain) == sorted(r for f in written for r in f)


def test_an_order_as_reads_come_yields_the_same_records(mem):
    written = _tfrecords(mem, files=4, per_file=300)
    dataset = make_dataset(mem, deterministic=False, num_parallel_reads=4)
    assert sorted(r.numpy() for r in dataset) == sorted(r for f in written for r in f)


def test_files_are_shuffled_again_on_each_pass(mem):
    _tfrecords(mem, files=8, per_file=1)
    dataset = make_dataset(mem, shuffle_files=True, seed=2, num_parallel_reads=1)
    first, second = [r.numpy() for r in dataset], [r.numpy() for r in dataset]
    assert first != second
    assert sorted(first) == sorted(second)


# -- sharding ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["tfrecord", "webdataset", "parquet"])
def test_input_pipelines_read_disjoint_files_that_cover_the_source(mem, fmt):
    if fmt == "tfrecord":
        _tfrecords(mem, files=5, per_file=2)
        key = lambda e: e.numpy()  # noqa: E731
        options = {}
    elif fmt == "webdataset":
        _shards(mem, count=10, per_shard=2)
        key = lambda e: int(e["cls"])  # noqa: E731
        options = {"decode": "basic"}
    else:
        _parquet(mem, rows=10, per_file=2)
        key = lambda e: int(e["id"])  # noqa: E731
        options = {}
    everything = sorted(key(e) for e in make_dataset(mem, **options))
    parts = []
    for i in range(2):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=i,
                                             num_replicas_in_sync=2)
        parts.append([key(e) for e in make_dataset(mem, input_context=context, **options)])
    assert parts[0] and parts[1]
    assert set(parts[0]).isdisjoint(parts[1])
    assert sorted(parts[0] + parts[1]) == everything


def test_fewer_files_than_input_pipelines_is_an_error(mem):
    _tfrecords(mem, files=2)
    context = tf.distribute.InputContext(num_input_pipelines=3, input_pipeline_id=0)
    with pytest.raises(ValueError, match="2 files cannot be split over 3 input pipelines"):
        make_dataset(mem, input_context=context)


# -- sources ----------------------------------------------------------------------------------

def test_a_brace_pattern_a_glob_and_a_list_name_the_same_files(mem):
    written = _tfrecords(mem, files=4, per_file=1)
    expected = [records[0] for records in written[1:3]]
    for source in (f"{mem}/train-{{01..02}}.tfrecord", f"{mem}/train-0[12].*",
                   [f"{mem}/train-01.tfrecord", f"{mem}/train-02.tfrecord"]):
        assert [r.numpy() for r in make_dataset(source, num_parallel_reads=1)] == expected


def test_a_directory_lists_only_files_of_the_format(mem):
    _shards(mem, count=4, per_shard=2)  # with their .count.json sidecars
    assert sorted(_ids(make_dataset(mem, decode="basic"), "cls")) == [0, 1, 2, 3]


# -- errors -----------------------------------------------------------------------------------

def test_an_unknown_format_is_an_error(mem):
    _tfrecords(mem, files=1)
    with pytest.raises(ValueError, match="unknown format 'csv'"):
        make_dataset(mem, format="csv")


def test_no_files_is_an_error(mem):
    _parquet(mem)
    with pytest.raises(FileNotFoundError, match="no tfrecord files"):
        make_dataset(mem, format="tfrecord")
    with pytest.raises(ValueError, match="no source given"):
        make_dataset([])


def test_mixed_formats_are_an_error(mem):
    _tfrecords(f"{mem}/a", files=1)
    _shards(f"{mem}/b", count=1)
    with pytest.raises(ValueError, match="several formats"):
        make_dataset(mem)
    with pytest.raises(ValueError, match="named as a webdataset file"):
        make_dataset([f"{mem}/b/shard-0000.tar"], format="tfrecord")


def test_options_of_another_format_are_an_error(mem):
    _tfrecords(mem, files=1)
    with pytest.raises(ValueError, match="columns= applies to parquet"):
        make_dataset(mem, columns=["id"])
    with pytest.raises(ValueError, match="output_signature does not apply"):
        make_dataset(mem, output_signature={"id": tf.TensorSpec([], tf.int64)})


def test_a_missing_file_is_an_error_naming_it(mem):
    _shards(mem, count=1)
    with pytest.raises(FileNotFoundError, match="shard-0009.tar"):
        make_dataset(f"{mem}/shard-0009.tar")


# -- TensorFlow's reader through pfio's filesystem plugin --------------------------------------

def test_tensorflow_reads_tfrecords_on_s3_through_the_plugin(s3_env, s3_bucket):
    from pfio.integrations.tensorflow import register_filesystem

    plugin = pytest.importorskip("pfio.integrations.tensorflow.plugin")
    try:
        register_filesystem(["s3"])
    except plugin.BuildError as exc:  # no compiler here
        pytest.skip(f"the plugin cannot be built: {exc}")
    root = f"s3://{s3_bucket}/d"
    written = _tfrecords(root, files=2, per_file=70)
    dataset = make_dataset(root, tfrecord_reader="tensorflow", num_parallel_reads=2)
    assert [r.numpy() for r in dataset] == _round_robin(written, NATIVE_CHUNK)


def test_tensorflow_reads_s3_in_8_mib_reads_not_the_whole_file(s3_env, s3_bucket, monkeypatch):
    """Issue 37: left to itself, TFRecordDataset asks the plugin for the whole file (up to
    128 MiB) before parsing; make_dataset reads files off local disk 8 MiB at a time."""
    from pfio.integrations.tensorflow import register_filesystem

    plugin = pytest.importorskip("pfio.integrations.tensorflow.plugin")
    try:
        register_filesystem(["s3"])
    except plugin.BuildError as exc:  # no compiler here
        pytest.skip(f"the plugin cannot be built: {exc}")
    from pfio.integrations.tensorflow.plugin import bridge

    url = f"s3://{s3_bucket}/big.tfrecord"
    record = os.urandom(256 << 10)
    with TFRecordWriter(url) as w:
        for _ in range(40):  # 10 MiB
            w.write(record)
    asked = []
    read_into = bridge.read_into

    def observed(reader, offset, buffer):
        asked.append(len(buffer))
        return read_into(reader, offset, buffer)

    monkeypatch.setattr(bridge, "read_into", observed)
    dataset = make_dataset(url, tfrecord_reader="tensorflow", num_parallel_reads=1)
    assert sum(1 for _ in dataset) == 40
    assert max(asked) == REMOTE_BUFFER and len(asked) >= 2
