"""The read-ahead of pfio's TensorFlow plugin (issue 37): while TensorFlow parses a block of
a file, the plugin reads the next one on pfio's fetch threads; every read still gets exactly
its bytes, and a read-ahead's error comes from the read that wants its bytes, naming the
file."""

import errno
import gc
import io
import os
import threading

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

from pfio.integrations.tensorflow.plugin import bridge, files, register  # noqa: E402
from pfio.integrations.tensorflow.plugin.files import AHEAD_MIN, Reader  # noqa: E402

MIB = 1 << 20


@pytest.fixture(scope="module", autouse=True)
def plugin():
    return register()


@pytest.fixture(autouse=True)
def alone():
    """No file of the plugin is open when a test starts (TensorFlow closes the files of a
    dataset when its iterator is collected): a file read alone is read ahead."""
    gc.collect()
    assert files._open_readers == 0


class WatchedFile(io.BytesIO):
    """A file that notes which thread reads which offset, and may fail from an offset on
    (a broken disk or connection there)."""

    name = "watched://file.bin"

    def __init__(self, data, fail_from=None):
        super().__init__(data)
        self.fail_from = fail_from
        self.readers = {}  # offset -> the name of the thread that read from there
        self.read_from = {}  # offset -> set once a read from there started

    def readinto(self, buffer):
        offset = self.tell()
        self.readers[offset] = threading.current_thread().name
        self.read_from.setdefault(offset, threading.Event()).set()
        if self.fail_from is not None and offset + len(buffer) > self.fail_from:
            raise OSError(errno.EIO, "the disk failed", self.name)
        return super().readinto(buffer)

    def started(self, offset):
        """Wait until a read from ``offset`` has started."""
        event = self.read_from.setdefault(offset, threading.Event())
        assert event.wait(timeout=30), f"no read from {offset}"


def read(reader, offset, size):
    buffer = bytearray(size)
    got = bridge.read_into(reader, offset, buffer)
    return bytes(buffer[:got])


def test_the_next_block_is_read_on_a_fetch_thread_while_tensorflow_works():
    data = os.urandom(3 * MIB)
    f = WatchedFile(data)
    reader = Reader(f)
    assert read(reader, 0, MIB) == data[:MIB]
    f.started(MIB)  # read ahead, before TensorFlow asks
    assert f.readers[MIB].startswith("pfio-fetch")
    assert read(reader, MIB, MIB) == data[MIB:2 * MIB]
    f.started(2 * MIB)  # and the block after it
    assert f.readers[2 * MIB].startswith("pfio-fetch")
    reader.close()
    assert f.closed


@pytest.mark.parametrize("where", ["mem", "s3"])
def test_sequential_reads_of_any_sizes_get_exact_bytes(where, request):
    if where == "s3":
        request.getfixturevalue("s3_env")
        url = f"s3://{request.getfixturevalue('s3_bucket')}/seq.bin"
    else:
        url = "pfio://mem/tf-readahead/seq.bin"
    data = os.urandom(6 * MIB + 12345)
    with tf.io.gfile.GFile(url, "wb") as w:
        w.write(data)
    reader = bridge.open_reader(url)
    try:
        sizes = [MIB, MIB, 300 << 10, 2 * MIB + 7, 17, AHEAD_MIN, 5 << 10, 3 * MIB]
        offset = 0
        for size in sizes:
            got = read(reader, offset, size)
            assert got == data[offset:offset + size]
            offset += len(got)
        assert offset == len(data)  # the last read was short: the end of the file
        assert read(reader, offset, MIB) == b""
    finally:
        bridge.close_reader(reader)


@pytest.mark.parametrize("where", ["mem", "s3"])
def test_reads_elsewhere_during_a_read_ahead_get_exact_bytes(where, request):
    """A read away from the read-ahead: a positional read on S3 (the read-ahead is kept
    and serves the read that comes back to it), a seek of the file on mem://."""
    if where == "s3":
        request.getfixturevalue("s3_env")
        url = f"s3://{request.getfixturevalue('s3_bucket')}/jump.bin"
    else:
        url = "pfio://mem/tf-readahead/jump.bin"
    data = os.urandom(5 * MIB)
    with tf.io.gfile.GFile(url, "wb") as w:
        w.write(data)
    reader = bridge.open_reader(url)
    try:
        assert read(reader, 0, MIB) == data[:MIB]
        assert read(reader, 4 * MIB, 1000) == data[4 * MIB:4 * MIB + 1000]
        assert read(reader, 10, 20) == data[10:30]
        assert read(reader, MIB, MIB) == data[MIB:2 * MIB]
        assert read(reader, 3 * MIB, MIB) == data[3 * MIB:4 * MIB]  # a new run, elsewhere
        assert read(reader, 4 * MIB, MIB) == data[4 * MIB:]
    finally:
        bridge.close_reader(reader)


def test_a_failed_read_ahead_fails_the_read_that_wants_its_bytes():
    data = os.urandom(3 * MIB)
    f = WatchedFile(data, fail_from=2 * MIB)
    reader = Reader(f)
    assert read(reader, 0, MIB) == data[:MIB]  # the read-ahead of [1, 2) MiB starts
    assert read(reader, MIB, MIB) == data[MIB:2 * MIB]  # [2, 3) MiB read ahead: it fails
    f.started(2 * MIB)
    assert f.readers[2 * MIB].startswith("pfio-fetch")
    with pytest.raises(OSError, match="watched://file.bin") as caught:
        read(reader, 2 * MIB, MIB)
    assert bridge.status_of(caught.value)[0] == bridge.TF_UNKNOWN
    f.fail_from = None  # the disk is back: the next read reads again
    assert read(reader, 2 * MIB, MIB) == data[2 * MIB:]
    reader.close()


def test_a_read_ahead_nobody_asks_for_drops_its_error():
    data = os.urandom(2 * MIB)
    f = WatchedFile(data, fail_from=MIB)
    reader = Reader(f)
    assert read(reader, 0, MIB) == data[:MIB]
    f.started(MIB)
    reader.close()  # waits for the read-ahead; its error is nobody's
    assert f.closed


def test_tfrecord_dataset_over_s3_reads_every_record_in_blocks(s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/records.tfrecord"
    records = [os.urandom(100 << 10) + bytes([i]) for i in range(50)]  # 5 MiB
    with tf.io.TFRecordWriter(url) as w:
        for record in records:
            w.write(record)
    dataset = tf.data.TFRecordDataset(url, buffer_size=MIB)
    assert [r.numpy() for r in dataset] == records


def test_a_read_ahead_error_is_a_tensorflow_error_naming_the_url(s3_env, s3_bucket,
                                                                  fault_proxy, monkeypatch):
    """The opening GET's body breaks after 1.5 MiB and every GET after it is denied: the
    read that wants those bytes (from the read-ahead) fails the dataset with TensorFlow's
    error, naming the object."""
    url = f"s3://{s3_bucket}/broken.tfrecord"
    with tf.io.TFRecordWriter(url) as w:
        for _ in range(30):  # 3 MiB
            w.write(os.urandom(100 << 10))
    monkeypatch.setenv("S3_ENDPOINT", fault_proxy.endpoint)
    bridge.reset()
    try:
        fault_proxy.cut_next(1, after_bytes=3 * MIB // 2)
        fault_proxy.fail_next(1000, status=403, code="AccessDenied",
                              match=lambda request: request.method == "GET" and
                              "range" in {k.lower() for k in request.headers})
        dataset = tf.data.TFRecordDataset(url, buffer_size=MIB // 2)
        with pytest.raises(tf.errors.PermissionDeniedError, match="broken.tfrecord"):
            for _ in dataset:
                pass
    finally:
        fault_proxy.reset()
        bridge.reset()


def test_buffers_of_closed_files_serve_later_files_with_their_own_bytes():
    """A closed file's read-ahead buffers are kept for the next files: each reads exactly
    its own bytes."""
    for _ in range(3):
        data = os.urandom(4 * MIB)
        reader = Reader(WatchedFile(data))
        for offset in range(0, len(data), MIB):
            assert read(reader, offset, MIB) == data[offset:offset + MIB]
        reader.close()
    assert len({id(buffer) for buffer in files._kept}) == len(files._kept)


def test_files_read_at_once_are_not_read_ahead():
    """TensorFlow reading several files at once (num_parallel_reads) reads one while it
    parses another: no read-ahead, each read in TensorFlow's thread, bytes exact."""
    datas = [os.urandom(3 * MIB) for _ in range(2)]
    watched = [WatchedFile(data) for data in datas]
    readers = [Reader(f) for f in watched]
    for offset in range(0, 3 * MIB, MIB):
        for reader, data in zip(readers, datas, strict=True):
            assert read(reader, offset, MIB) == data[offset:offset + MIB]
    for reader in readers:
        reader.close()
    me = threading.current_thread().name
    assert all(name == me for f in watched for name in f.readers.values())
