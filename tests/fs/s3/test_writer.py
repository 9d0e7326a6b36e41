"""Writing S3 objects: single PUT, concurrent multipart upload, nothing published on error."""

from __future__ import annotations

import itertools
import os

import pytest

from pfio.fs.s3 import S3

MIB = 1 << 20


@pytest.fixture
def fs(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket, mpu_chunksize=5 * MIB)


def uploads(fs: S3) -> list:
    return fs.client.list_multipart_uploads(Bucket=fs.bucket).get("Uploads", [])


def test_small_write_is_one_put(fs: S3, s3_requests) -> None:
    log = s3_requests(fs)
    with fs.open("f", "wb") as f:
        for _ in range(100):
            f.write(b"0123456789")
    assert [r[0] for r in log] == ["PUT"]
    assert fs.stat("f").size == 1000


def test_large_write_is_multipart(fs: S3, s3_requests) -> None:
    data = os.urandom(12 * MIB)
    log = s3_requests(fs)
    with fs.open("big", "wb") as f:
        for i in range(0, len(data), 3 * MIB + 1):
            f.write(data[i:i + 3 * MIB + 1])
    probe = fs.engine == "http"  # (a 1-byte part 1 first: see test_s3_integrity.py)
    assert [r[0] for r in log].count("PUT") == 3 + probe  # parts of 5 + 5 + 2 MiB
    assert [r[0] for r in log].count("POST") == 2  # create and complete
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_parts_of_large_bytes_are_sent_as_they_are(fs: S3) -> None:
    data = os.urandom(11 * MIB)
    with fs.open("kept", "wb") as f:
        f.write(data[:6 * MIB])  # a part straight from these bytes, then 1 MiB buffered
        f.write(data[6 * MIB:])
    with fs.open("kept", "rb") as f:
        assert f.read() == data


def test_a_buffer_changed_after_its_write_uploads_what_was_written(fs: S3) -> None:
    data = bytearray(os.urandom(11 * MIB))
    expected = bytes(data)
    with fs.open("copied", "wb") as f:
        f.write(data)
        data[:] = bytes(len(data))  # the parts in flight hold copies
    with fs.open("copied", "rb") as f:
        assert f.read() == expected


def test_nothing_published_before_close(fs: S3) -> None:
    f = fs.open("late", "wb")
    f.write(b"x" * (6 * MIB))
    assert not fs.exists("late")
    f.close()
    assert fs.exists("late")


def test_exception_publishes_nothing(fs: S3) -> None:
    with pytest.raises(RuntimeError), fs.open("f", "wb") as f:
        f.write(b"partial")
        raise RuntimeError("boom")
    assert not fs.exists("f")


def test_exception_aborts_multipart_upload(fs: S3) -> None:
    with pytest.raises(RuntimeError), fs.open("big", "wb") as f:
        f.write(os.urandom(11 * MIB))
        raise RuntimeError("boom")
    assert not fs.exists("big")
    assert uploads(fs) == []


def test_exception_in_text_mode_publishes_nothing(fs: S3) -> None:
    with pytest.raises(RuntimeError), fs.open("t.txt", "w") as f:
        f.write("text")
        raise RuntimeError("boom")
    assert not fs.exists("t.txt")


def test_explicit_abort_publishes_nothing(fs: S3) -> None:
    f = fs.open("f", "wb")
    f.write(os.urandom(6 * MIB))
    f.abort()
    f.close()
    assert not fs.exists("f") and uploads(fs) == []


def test_overwrite_replaces_object(fs: S3) -> None:
    for content in (b"first", b"second"):
        with fs.open("f", "wb") as f:
            f.write(content)
    with fs.open("f", "rb") as f:
        assert f.read() == b"second"


def test_write_to_missing_bucket_raises_file_not_found(s3_env: str) -> None:
    fs = S3("pfio-no-bucket-here")
    with pytest.raises(FileNotFoundError), fs.open("f", "wb") as f:
        f.write(b"x")


def test_tell_counts_bytes_written(fs: S3) -> None:
    with fs.open("f", "wb") as f:
        f.write(b"abc")
        assert f.tell() == 3


def _checksum_headers(fs: S3) -> list[tuple[str, str | None]]:
    """The (method, x-amz-checksum-crc32 header) of each request ``fs`` sends from now on."""
    seen: list[tuple[str, str | None]] = []

    fs.connection.add_request_hook(lambda method, path, headers: seen.append(
        (method, headers.get("x-amz-checksum-crc32"))))
    return seen


def test_a_put_carries_the_crc32_of_its_body(fs: S3) -> None:
    from pfio.fs.s3.integrity import crc32_of

    seen = _checksum_headers(fs)
    with fs.open("f", "wb") as f:
        f.write(b"checked by the server")
    assert seen == [("PUT", crc32_of(b"checked by the server"))]


def test_each_part_carries_the_crc32_of_its_body(fs: S3) -> None:
    from pfio.fs.s3.integrity import crc32_of

    data = os.urandom(11 * MIB)
    seen = _checksum_headers(fs)
    with fs.open("big", "wb") as f:
        f.write(data)
    parts = [data[:5 * MIB], data[5 * MIB:10 * MIB], data[10 * MIB:]]
    if fs.engine == "http":  # (a 1-byte part 1 first: see test_s3_integrity.py)
        parts.append(b"\0")
    assert sorted(v for m, v in seen if m == "PUT") == sorted(crc32_of(p) for p in parts)
    with fs.open("big", "rb") as f:
        assert f.read() == data


def test_parts_after_the_first_ones_are_twice_the_chunk_size(fs: S3, monkeypatch) -> None:
    from pfio.fs.s3.integrity import crc32_of
    from pfio.fs.s3.writer import S3Sink

    monkeypatch.setattr(S3Sink, "GROW_AFTER", 2)
    data = os.urandom(33 * MIB)
    seen = _checksum_headers(fs)
    with fs.open("grown", "wb") as f:
        for i in range(0, len(data), MIB):
            f.write(data[i:i + MIB])
    bounds = [0, 5, 10, 20, 30, 33]  # 2 parts of 5 MiB, then of 10
    parts = [data[a * MIB:b * MIB] for a, b in itertools.pairwise(bounds)]
    if fs.engine == "http":  # (a 1-byte part 1 first: see test_s3_integrity.py)
        parts.append(b"\0")
    assert sorted(v for m, v in seen if m == "PUT") == sorted(crc32_of(p) for p in parts)
    with fs.open("grown", "rb") as f:
        assert f.read() == data


def test_a_part_of_two_chunks_takes_two_of_the_slots_in_flight(s3_env: str, s3_bucket: str,
                                                              monkeypatch) -> None:
    import threading

    from pfio.fs.s3.writer import S3Sink

    monkeypatch.setattr(S3Sink, "GROW_AFTER", 0)  # every part of 2 chunks (10 MiB)
    fs = S3(s3_bucket, mpu_chunksize=5 * MIB, mpu_concurrency=2)
    send = S3Sink._send_part_once
    lock, running, most = threading.Lock(), [0], [0]
    another = threading.Event()

    def counted(self, number, chunk, sums):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            if running[0] > 1:
                another.set()
        another.wait(0.5)  # (time for another part to start, were it allowed to)
        try:
            return send(self, number, chunk, sums)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(S3Sink, "_send_part_once", counted)
    data = os.urandom(31 * MIB)
    with fs.open("bounded", "wb") as f:
        f.write(data)
    assert most[0] == 1  # 2 slots: one part of 2 chunks in flight at a time
    with fs.open("bounded", "rb") as f:
        assert f.read() == data
