"""Sequential reading of a gzip file through transparent compression (issue 11).

1. S3 (a moto server on 127.0.0.1): a 200 MiB gzip object (20 MiB with ``--quick``) read
   to the end in 1 MiB pieces: decompressed MB/s of
   ``from_url("s3://bucket").open(key, "rb", compression="infer")`` against
   ``gzip.GzipFile`` over the boto3 ``get_object`` streaming body (target >= 0.9x). For
   information, the same object read raw (no decompression): pfio's S3 reader against the
   boto3 body, which separates the cost of the S3 reader from that of decompression.
2. Local disk, for information: the same file through ``Local.open(..., compression="infer")``
   against ``gzip.GzipFile(open(path, "rb"))``.

The data is half random bytes and half text, so decompression and transfer both count.
"""

from __future__ import annotations

import gzip
import os
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, best_of, main  # noqa: E402

from pfio.fs.local import Local  # noqa: E402

MIB = 1024 * 1024
PIECE = MIB
BUCKET = "bench-compression"
KEY = "data.bin.gz"


def _make_gzip(path: str, compressed_size: int) -> int:
    """Write a gzip file of about ``compressed_size`` bytes; return its decompressed size."""
    text = b"".join(b"%08d some text that compresses well, row %d\n" % (i, i * 7)
                    for i in range(MIB // 64))[: MIB // 2]
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    total = 0
    with open(path, "wb") as out:
        while out.tell() < compressed_size:
            chunk = os.urandom(MIB // 2) + text
            out.write(compressor.compress(chunk))
            total += len(chunk)
        out.write(compressor.flush())
    return total


def _drain(f) -> int:
    total = 0
    while piece := f.read(PIECE):
        total += len(piece)
    return total


def _rate(size: int, seconds: float) -> float:
    return size / MIB / seconds


def _local(path: str, size: int, repeat: int) -> Row:
    directory, name = os.path.split(path)
    fs = Local(directory)

    def ours() -> None:
        with fs.open(name, "rb", compression="infer") as f:
            assert _drain(f) == size

    def baseline() -> None:
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw) as f:
            assert _drain(f) == size

    return Row("compression", "local gzip sequential read", _rate(size, best_of(ours, repeat)),
               "gzip.GzipFile(open())", _rate(size, best_of(baseline, repeat)), None,
               unit="MB/s")


def _s3(path: str, size: int, repeat: int) -> list[Row]:
    import boto3

    from pfio.fs.s3 import S3
    from pfio.testing.s3server import MotoServer

    for name, value in (("AWS_ACCESS_KEY_ID", "bench"), ("AWS_SECRET_ACCESS_KEY", "bench"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        os.environ.setdefault(name, value)
    stored = os.path.getsize(path)
    with MotoServer() as server:
        client = boto3.client("s3", endpoint_url=server.endpoint)
        client.create_bucket(Bucket=BUCKET)
        client.upload_file(path, BUCKET, KEY)
        fs = S3(BUCKET, endpoint=server.endpoint)

        def ours(compression: str | None, expected: int) -> None:
            with fs.open(KEY, "rb", compression=compression) as f:
                assert _drain(f) == expected

        def baseline(gzipped: bool, expected: int) -> None:
            body = client.get_object(Bucket=BUCKET, Key=KEY)["Body"]
            with gzip.GzipFile(fileobj=body) if gzipped else body as f:
                assert _drain(f) == expected
            body.close()

        rows = [
            Row("compression", "S3 gzip sequential read", 0.0, "gzip.GzipFile(boto3 body)",
                0.0, 0.9, unit="MB/s"),
            Row("compression", "S3 raw sequential read of the same object", 0.0,
                "boto3 body", 0.0, None, unit="MB/s"),
        ]
        rows[0].baseline = _rate(size, best_of(lambda: baseline(True, size), repeat))
        rows[0].ours = _rate(size, best_of(lambda: ours("infer", size), repeat))
        rows[1].baseline = _rate(stored, best_of(lambda: baseline(False, stored), repeat))
        rows[1].ours = _rate(stored, best_of(lambda: ours(None, stored), repeat))
        fs.close()
    return rows


def run(quick: bool) -> list[Row]:
    """Both comparisons; ``quick`` uses a 20 MiB file instead of 200 MiB."""
    with tempfile.TemporaryDirectory(prefix="pfio-bench-compression-") as workdir:
        path = os.path.join(workdir, KEY)
        size = _make_gzip(path, (20 if quick else 200) * MIB)
        repeat = 2
        return [*_s3(path, size, repeat), _local(path, size, repeat)]


if __name__ == "__main__":
    main(run)
