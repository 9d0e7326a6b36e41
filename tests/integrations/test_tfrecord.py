"""TFRecord files on pfio URLs without TensorFlow: the framing, round trips on local, mem://,
S3 (a moto server over real HTTP) and a zip on S3, compression, resuming at an offset, errors
that name the file and the record's offset, and atomic writes."""

import errno
import gzip
import io
import struct
import zipfile
import zlib

import pytest

pytest.importorskip("google_crc32c")

import pfio  # noqa: E402
from pfio.integrations.tfrecord import (  # noqa: E402
    TFRecordError,
    TFRecordWriter,
    iter_records,
    iter_records_with_offsets,
    masked_crc,
)
from pfio.integrations.tfrecord.reader import CHUNK_SIZE  # noqa: E402


def _records(count=60):
    """Records of varied sizes (0 bytes included), each of its own bytes."""
    return [bytes([i % 251]) * ((i * 7919) % 30_000) for i in range(count)]


def _write(url, records, **options):
    with TFRecordWriter(url, **options) as writer:
        for record in records:
            writer.write(record)
    return url


def _offsets(url, **options):
    return [offset for offset, _ in iter_records_with_offsets(url, **options)]


# -- the format ------------------------------------------------------------------------------

def test_the_masked_crc_is_crc32c_rotated_and_offset():
    crc = 0xE3069283  # CRC-32C of b"123456789" (the check value of the Castagnoli CRC)
    assert masked_crc(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) % 2**32


def test_a_record_is_framed_by_its_length_and_two_masked_crcs(tmp_path):
    url = _write(str(tmp_path / "one.tfrecord"), [b"hello"])
    length = struct.pack("<Q", 5)
    expected = length + struct.pack("<I", masked_crc(length)) + b"hello" + \
        struct.pack("<I", masked_crc(b"hello"))
    assert (tmp_path / "one.tfrecord").read_bytes() == expected
    assert list(iter_records(url)) == [b"hello"]


def test_the_writer_takes_any_bytes_like_object(tmp_path):
    url = str(tmp_path / "views.tfrecord")
    with TFRecordWriter(url) as writer:
        writer.write(bytearray(b"ab"))
        writer.write(memoryview(b"cd"))
        writer.write(memoryview(struct.pack("<2I", 1, 2)).cast("I"))
        assert writer.count == 3
    assert list(iter_records(url)) == [b"ab", b"cd", struct.pack("<2I", 1, 2)]


# -- round trips ---------------------------------------------------------------------------

@pytest.mark.parametrize("compression", [None, "gzip", "zlib"])
def test_records_read_back_as_written_on_a_local_disk(tmp_path, compression):
    records = _records()
    url = _write(str(tmp_path / "a.tfrecord"), records, compression=compression)
    assert list(iter_records(url, compression=compression)) == records


def test_records_read_back_as_written_in_memory(request):
    records = _records(20)
    url = _write(f"mem://tfrecord-{request.node.name}/d/a.tfrecord", records)
    assert list(iter_records(url)) == records


def test_records_straddling_reads_and_one_larger_than_the_buffer(tmp_path):
    records = [b"x" * (CHUNK_SIZE // 3 + 17)] * 7 + [b"big" * CHUNK_SIZE] + [b"", b"tail"]
    url = _write(str(tmp_path / "big.tfrecord"), records)
    assert list(iter_records(url)) == records


def test_an_empty_file_has_no_records(tmp_path):
    url = _write(str(tmp_path / "empty.tfrecord"), [])
    assert (tmp_path / "empty.tfrecord").read_bytes() == b""
    assert list(iter_records(url)) == []


def test_compressed_files_are_plain_gzip_and_zlib_streams_of_the_records(tmp_path):
    records = _records(10)
    plain = (tmp_path / "p.tfrecord")
    _write(str(plain), records)
    _write(str(tmp_path / "g.tfrecord"), records, compression="GZIP")
    _write(str(tmp_path / "z.tfrecord"), records, compression="ZLIB")
    assert gzip.decompress((tmp_path / "g.tfrecord").read_bytes()) == plain.read_bytes()
    assert zlib.decompress((tmp_path / "z.tfrecord").read_bytes()) == plain.read_bytes()


@pytest.mark.parametrize(("name", "magic"), [("a.tfrecord.gz", b"\x1f\x8b"),
                                             ("a.tfrecord.zlib", b"\x78"),
                                             ("a.tfrecord", struct.pack("<Q", 3)[:2])])
def test_infer_goes_by_the_name(tmp_path, name, magic):
    url = _write(str(tmp_path / name), [b"abc"], compression="infer")
    assert (tmp_path / name).read_bytes().startswith(magic)
    assert list(iter_records(url, compression="infer")) == [b"abc"]


def test_an_unknown_compression_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="'snappy'.*supported"):
        TFRecordWriter(str(tmp_path / "a.tfrecord"), compression="snappy")
    with pytest.raises(ValueError, match="'lz4'"):
        list(iter_records(str(tmp_path / "a.tfrecord"), compression="lz4"))
    assert not (tmp_path / "a.tfrecord").exists()


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(iter_records(str(tmp_path / "none.tfrecord")))


# -- resuming at an offset -------------------------------------------------------------------

@pytest.mark.parametrize("compression", [None, "gzip"])
def test_reading_from_a_records_offset_yields_it_and_the_rest(tmp_path, compression):
    records = _records(30)
    url = _write(str(tmp_path / "r.tfrecord"), records, compression=compression)
    located = list(iter_records_with_offsets(url, compression=compression))
    assert [record for _, record in located] == records
    for k in (0, 1, 17, 29):
        assert list(iter_records(url, compression=compression,
                                 offset=located[k][0])) == records[k:]


def test_offsets_are_where_each_record_starts(tmp_path):
    records = [b"a", b"bcd", b""]
    url = _write(str(tmp_path / "o.tfrecord"), records)
    assert _offsets(url) == [0, 17, 36]


@pytest.mark.parametrize("compression", [None, "zlib"])
def test_the_end_offset_yields_nothing_and_past_it_is_an_error(tmp_path, compression):
    url = _write(str(tmp_path / "e.tfrecord"), [b"abc"], compression=compression)
    assert list(iter_records(url, compression=compression, offset=19)) == []
    with pytest.raises(TFRecordError, match="past the end") as caught:
        list(iter_records(url, compression=compression, offset=20))
    assert caught.value.offset == 20


def test_an_offset_inside_a_record_is_reported_as_corrupt(tmp_path):
    url = _write(str(tmp_path / "m.tfrecord"), [b"a" * 40, b"b" * 40])
    with pytest.raises(TFRecordError, match="length's CRC") as caught:
        list(iter_records(url, offset=5))
    assert caught.value.offset == 5


# -- errors ---------------------------------------------------------------------------------

def _damaged(tmp_path, at, value=None, cut=None):
    """A file of three records of 100 bytes (each takes 116), damaged at byte ``at``."""
    path = tmp_path / "bad.tfrecord"
    _write(str(path), [bytes([65 + i]) * 100 for i in range(3)])
    data = bytearray(path.read_bytes())
    if cut is not None:
        del data[cut:]
    else:
        data[at] ^= value or 0xFF
    path.write_bytes(bytes(data))
    return str(path)


def test_a_corrupt_length_crc_names_the_file_and_the_records_offset(tmp_path):
    url = _damaged(tmp_path, 116 + 9)
    got = []
    with pytest.raises(TFRecordError) as caught:
        for record in iter_records(url):
            got.append(record)
    assert got == [b"A" * 100]
    assert caught.value.offset == 116 and caught.value.url == url
    assert url in str(caught.value) and "offset 116" in str(caught.value)
    assert "length's CRC" in str(caught.value)


def test_a_corrupt_length_is_caught_by_the_length_crc(tmp_path):
    url = _damaged(tmp_path, 232 + 1)
    with pytest.raises(TFRecordError, match="length's CRC.*offset 232"):
        list(iter_records(url))


def test_corrupt_data_names_the_file_and_the_records_offset(tmp_path):
    url = _damaged(tmp_path, 232 + 12 + 50)
    with pytest.raises(TFRecordError, match="CRC of its 100 bytes of data") as caught:
        list(iter_records(url))
    assert caught.value.offset == 232 and url in str(caught.value)


def test_a_corrupt_data_crc_is_an_error(tmp_path):
    url = _damaged(tmp_path, 116 + 112 + 2)
    with pytest.raises(TFRecordError, match="offset 116"):
        list(iter_records(url))


@pytest.mark.parametrize(("cut", "what"), [(116 + 50, "inside a record of 100 bytes"),
                                           (232 + 5, "inside a record header"),
                                           (347, "inside a record of 100 bytes")])
def test_a_truncated_file_names_the_cut_record(tmp_path, cut, what):
    url = _damaged(tmp_path, 0, cut=cut)
    with pytest.raises(TFRecordError, match=f"truncated record: the file ends {what}") as caught:
        list(iter_records(url))
    assert caught.value.offset == cut // 116 * 116


def test_a_record_error_is_a_value_error(tmp_path):
    with pytest.raises(ValueError):
        list(iter_records(_damaged(tmp_path, 20)))


def test_verify_false_skips_both_crc_checks(tmp_path):
    url = _damaged(tmp_path, 116 + 12 + 3)  # a data byte of the second record
    records = list(iter_records(url, verify=False))
    assert records[1][3] == ord("B") ^ 0xFF and len(records) == 3
    url = _damaged(tmp_path, 9)  # the first length's CRC
    assert len(list(iter_records(url, verify=False))) == 3


def test_verify_false_still_reports_a_truncated_file(tmp_path):
    with pytest.raises(TFRecordError, match="truncated"):
        list(iter_records(_damaged(tmp_path, 0, cut=300), verify=False))


def test_a_huge_corrupt_length_without_verify_is_a_truncated_record(tmp_path):
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(struct.pack("<QI", 1 << 60, 0) + b"x" * 100)
    with pytest.raises(TFRecordError, match="truncated"):
        list(iter_records(str(path), verify=False))


def test_a_truncated_compressed_stream_is_an_eio_os_error(tmp_path):
    url = _write(str(tmp_path / "t.tfrecord.gz"), _records(10), compression="gzip")
    data = (tmp_path / "t.tfrecord.gz").read_bytes()
    (tmp_path / "t.tfrecord.gz").write_bytes(data[:len(data) // 2])
    with pytest.raises(OSError) as caught:
        list(iter_records(url, compression="infer"))
    assert caught.value.errno == errno.EIO and caught.value.filename == url
    assert "truncated gzip stream" in str(caught.value)


# -- atomic writes -----------------------------------------------------------------------------

@pytest.mark.parametrize("compression", [None, "gzip"])
def test_an_exception_inside_with_publishes_nothing(tmp_path, compression):
    url = str(tmp_path / "x.tfrecord")
    with pytest.raises(RuntimeError, match="boom"):
        with TFRecordWriter(url, compression=compression) as writer:
            writer.write(b"a" * 1000)
            writer.flush()
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_an_exception_in_memory_publishes_nothing(request):
    base = f"mem://tfrecord-{request.node.name}"
    with pytest.raises(RuntimeError):
        with TFRecordWriter(f"{base}/x.tfrecord") as writer:
            writer.write(b"a")
            raise RuntimeError
    assert not pfio.from_url(base).exists("x.tfrecord")


def test_abort_publishes_nothing_and_nothing_shows_before_close(tmp_path):
    url = str(tmp_path / "x.tfrecord")
    writer = TFRecordWriter(url)
    writer.write(b"abc")
    writer.flush()
    assert not (tmp_path / "x.tfrecord").exists()
    writer.abort()
    assert writer.closed and list(tmp_path.iterdir()) == []


def test_a_closed_writer_refuses_records(tmp_path):
    writer = TFRecordWriter(str(tmp_path / "c.tfrecord"))
    writer.close()
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.write(b"a")


# -- S3 ---------------------------------------------------------------------------------------

def test_each_file_on_s3_costs_one_get(s3_env, s3_bucket, s3_requests):
    records = [bytes([i]) * 100_000 for i in range(30)]  # 3 MB a file: read on from one GET
    urls = [_write(f"s3://{s3_bucket}/tfr/part-{n}.tfrecord", records) for n in range(2)]
    log = s3_requests(pfio.from_url(f"s3://{s3_bucket}"))
    assert [list(iter_records(url)) for url in urls] == [records, records]
    assert log == [("GET", f"/{s3_bucket}/tfr/part-{n}.tfrecord", None) for n in range(2)]


def test_resuming_on_s3_does_not_fetch_the_whole_object(s3_env, s3_bucket, s3_requests):
    records = [bytes([i]) * 100_000 for i in range(30)]
    url = _write(f"s3://{s3_bucket}/r.tfrecord", records)
    offset = _offsets(url)[25]
    log = s3_requests(pfio.from_url(f"s3://{s3_bucket}"))
    assert list(iter_records(url, offset=offset)) == records[25:]
    assert log and all(method == "GET" and rng is not None for method, _, rng in log)


def test_filesystem_options_reach_s3(s3_env, s3_bucket, monkeypatch):
    monkeypatch.delenv("S3_ENDPOINT")
    url = _write(f"s3://{s3_bucket}/o.tfrecord.gz", [b"abc"], compression="infer",
                 endpoint=s3_env)
    assert list(iter_records(url, compression="infer", endpoint=s3_env)) == [b"abc"]


def test_an_exception_while_writing_to_s3_publishes_nothing(s3_env, s3_bucket):
    with pytest.raises(RuntimeError):
        with TFRecordWriter(f"s3://{s3_bucket}/x.tfrecord") as writer:
            writer.write(b"a" * 1000)
            raise RuntimeError
    assert list(pfio.from_url(f"s3://{s3_bucket}").list()) == []


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_tfrecord_member_of_a_zip_on_s3(s3_env, s3_bucket, tmp_path, method):
    records = _records(40)
    _write(str(tmp_path / "m.tfrecord"), records)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as archive:
        archive.write(tmp_path / "m.tfrecord", "data/train.tfrecord")
        archive.writestr("README", "other member")
    with pfio.open_url(f"s3://{s3_bucket}/shards.zip", "wb") as f:
        f.write(out.getvalue())
    url = f"s3://{s3_bucket}/shards.zip/data/train.tfrecord"
    assert list(iter_records(url)) == records
    assert list(iter_records(url, offset=_offsets(url)[39])) == records[39:]
