"""pfio's TensorFlow filesystem plugin under TensorFlow's own readers and writers: TFRecord
datasets, Keras models and checkpoints, SavedModel; a zip on S3; Ceph."""

import io
import os
import secrets
import struct
import zipfile

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

import pfio  # noqa: E402
from pfio.integrations.tensorflow.plugin import register  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def plugin():
    return register()


def records(n, size=1000):
    return [bytes([i % 256]) * size for i in range(n)]


def write_tfrecords(url, payloads):
    with tf.io.TFRecordWriter(url) as writer:
        for payload in payloads:
            writer.write(payload)


def parse_tfrecords(data):
    """The payloads of a TFRecord file (length, its CRC, payload, its CRC, ...)."""
    found, i = [], 0
    while i < len(data):
        (length,) = struct.unpack_from("<Q", data, i)
        found.append(data[i + 12:i + 12 + length])
        i += 16 + length
    return found


def read_dataset(urls, **kwargs):
    return [r.numpy() for r in tf.data.TFRecordDataset(urls, **kwargs)]


def test_tfrecords_written_through_the_plugin_on_s3(s3_env, s3_bucket):
    payloads = records(50, 20_000)
    url = f"s3://{s3_bucket}/train/part-0.tfrecord"
    write_tfrecords(url, payloads)
    assert read_dataset(url) == payloads
    assert parse_tfrecords(pfio.open_url(url, "rb").read()) == payloads


def test_tfrecords_in_parallel_from_a_glob(s3_env, s3_bucket):
    shards = {f"pfio://s3/{s3_bucket}/p/part-{i}.tfrecord": records(10) for i in range(4)}
    for url, payloads in shards.items():
        write_tfrecords(url, [p + url.encode() for p in payloads])
    files = tf.io.gfile.glob(f"pfio://s3/{s3_bucket}/p/part-*.tfrecord")
    assert files == sorted(shards)
    got = read_dataset(files, num_parallel_reads=4)
    assert sorted(got) == sorted(p + u.encode() for u, ps in shards.items() for p in ps)


def test_tfrecords_inside_a_zip_on_s3(s3_env, s3_bucket, tmp_path):
    payloads = records(20)
    write_tfrecords(str(tmp_path / "x.tfrecord"), payloads)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.write(tmp_path / "x.tfrecord", "shards/x.tfrecord")
    with pfio.open_url(f"s3://{s3_bucket}/data.zip", "wb") as f:
        f.write(archive.getvalue())
    member = f"pfio://s3/{s3_bucket}/data.zip/shards/x.tfrecord"
    assert read_dataset(member) == payloads
    assert tf.io.gfile.glob(f"pfio://s3/{s3_bucket}/data.zip/shards/*.tfrecord") == [member]
    assert tf.io.gfile.stat(member).length == (tmp_path / "x.tfrecord").stat().st_size


def test_a_zip_is_read_only(s3_env, s3_bucket):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a", b"a")
    with pfio.open_url(f"s3://{s3_bucket}/data.zip", "wb") as f:
        f.write(archive.getvalue())
    with pytest.raises(tf.errors.UnimplementedError, match="read-only|open for reading"):
        with tf.io.gfile.GFile(f"s3://{s3_bucket}/data.zip/b", "wb") as f:
            f.write(b"b")


def tiny_model():
    keras = tf.keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_keras_model_saved_to_s3_and_loaded(s3_env, s3_bucket):
    model = tiny_model()
    url = f"s3://{s3_bucket}/models/m.keras"
    model.save(url)
    loaded = tf.keras.models.load_model(url)
    for a, b in zip(model.get_weights(), loaded.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_keras_model_checkpoint_to_s3(s3_env, s3_bucket):
    model = tiny_model()
    x, y = np.ones((8, 3), "float32"), np.zeros((8, 2), "float32")
    checkpoint = tf.keras.callbacks.ModelCheckpoint(f"s3://{s3_bucket}/ckpt/e{{epoch}}.keras")
    model.fit(x, y, epochs=2, verbose=0, callbacks=[checkpoint])
    assert sorted(pfio.from_url(f"s3://{s3_bucket}/ckpt").list()) == ["e1.keras", "e2.keras"]
    loaded = tf.keras.models.load_model(f"s3://{s3_bucket}/ckpt/e2.keras")
    np.testing.assert_array_equal(loaded.get_weights()[0], model.get_weights()[0])


def test_saved_model_to_s3(s3_env, s3_bucket):
    module = tf.Module()
    module.v = tf.Variable([1.0, 2.0, 3.0])
    module.double = tf.function(lambda: module.v * 2, input_signature=[])
    url = f"pfio://s3/{s3_bucket}/exported/{secrets.token_hex(2)}"
    tf.saved_model.save(module, url)
    loaded = tf.saved_model.load(url)
    np.testing.assert_array_equal(loaded.v.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(loaded.double().numpy(), [2.0, 4.0, 6.0])


def test_tfrecords_on_ceph(ceph_server, monkeypatch):
    for name, value in ceph_server.credentials.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("S3_ENDPOINT", ceph_server.endpoint)
    bucket = f"pfio-tf-{secrets.token_hex(6)}"
    fs = pfio.from_url(f"s3://{bucket}", create_bucket=True)
    try:
        payloads = records(30, 5000)
        write_tfrecords(f"s3://{bucket}/x.tfrecord", payloads)
        assert read_dataset(f"s3://{bucket}/x.tfrecord") == payloads
        assert tf.io.gfile.listdir(f"s3://{bucket}/") == ["x.tfrecord"]
    finally:
        fs.remove("", recursive=True)
