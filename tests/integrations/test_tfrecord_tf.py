"""TFRecords and tf.train.Example interchanged with real TensorFlow (skipped without it):
files TensorFlow writes read by pfio and the other way round, pfio's writer against
TensorFlow's byte for byte, and Example bytes parsed by the other side."""

import os
import zlib

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

from pfio.integrations.tfrecord import (  # noqa: E402
    TFRecordWriter,
    iter_records,
    make_example,
    parse_example,
)

RECORDS = [bytes([i % 256]) * (i * 997 % 20_000) for i in range(40)] + [b"", b"end"]
COMPRESSIONS = ["", "GZIP", "ZLIB"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The same records written by TensorFlow and by pfio, for each compression."""
    base = tmp_path_factory.mktemp("tfrecords")
    paths = {}
    for compression in COMPRESSIONS:
        theirs, ours = str(base / f"tf-{compression}.tfrecord"), \
            str(base / f"pfio-{compression}.tfrecord")
        with tf.io.TFRecordWriter(theirs, options=compression) as writer:
            for record in RECORDS:
                writer.write(record)
        with TFRecordWriter(ours, compression=compression) as writer:
            for record in RECORDS:
                writer.write(record)
        paths[compression] = theirs, ours
    return paths


def _bytes(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_pfio_reads_what_tensorflow_writes(written, compression):
    theirs, _ = written[compression]
    assert list(iter_records(theirs, compression=compression)) == RECORDS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tensorflow_reads_what_pfio_writes(written, compression):
    _, ours = written[compression]
    dataset = tf.data.TFRecordDataset(ours, compression_type=compression)
    assert [r.numpy() for r in dataset] == RECORDS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_pfio_writes_the_bytes_tensorflow_writes(written, compression):
    theirs, ours = written[compression]
    assert _bytes(ours) == _bytes(theirs)


def test_the_streams_hold_the_same_records_whatever_the_compressor(written):
    wbits = {"GZIP": 16 + zlib.MAX_WBITS, "ZLIB": zlib.MAX_WBITS}
    plain = _bytes(written[""][1])
    for compression, bits in wbits.items():
        for path in written[compression]:
            assert zlib.decompress(_bytes(path), bits) == plain


def test_pfio_parses_examples_tensorflow_makes():
    example = tf.train.Example(features=tf.train.Features(feature={
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"\x89PNG"])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[7])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, -1.0, 2.0, 3.5])),
        "empty": tf.train.Feature(),
    }))
    record = example.SerializeToString()
    parsed = parse_example(record, {"image": "bytes", "label": "int64", "x": ("float", (2, 2))})
    assert parsed["image"] == b"\x89PNG" and int(parsed["label"]) == 7
    assert parsed["x"].tolist() == [[0.5, -1.0], [2.0, 3.5]]
    assert parse_example(record)["empty"] == []


def test_tensorflow_parses_examples_pfio_makes():
    record = make_example({"image": b"\xff\xd8", "label": 3, "x": np.arange(4, dtype=np.float32),
                           "tags": ["a", "b"]})
    spec = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64),
            "x": tf.io.FixedLenFeature([2, 2], tf.float32),
            "tags": tf.io.VarLenFeature(tf.string)}
    parsed = tf.io.parse_single_example(record, spec)
    assert parsed["image"].numpy() == b"\xff\xd8" and parsed["label"].numpy() == 3
    assert parsed["x"].numpy().tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert parsed["tags"].values.numpy().tolist() == [b"a", b"b"]
    example = tf.train.Example.FromString(record)
    assert list(example.features.feature["label"].int64_list.value) == [3]
    assert example.SerializeToString(deterministic=True) == record


def test_an_empty_list_is_an_empty_feature_to_tensorflow():
    parsed = tf.io.parse_single_example(make_example({"boxes": []}),
                                        {"boxes": tf.io.VarLenFeature(tf.float32)})
    assert parsed["boxes"].values.numpy().tolist() == []
