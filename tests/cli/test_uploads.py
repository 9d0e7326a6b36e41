"""pfio uploads ls|abort: multipart uploads left under an S3 prefix."""

import os

import boto3
import pytest

from pfio.cli import main
from pfio.cli.uploads import parse_age


@pytest.fixture
def client(s3_env):
    return boto3.session.Session().client("s3", endpoint_url=os.environ["S3_ENDPOINT"])


def _start(client, bucket, key):
    upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    client.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=b"x" * 10)
    return upload


def _left(client, bucket):
    return sorted(u["Key"] for u in client.list_multipart_uploads(Bucket=bucket)
                  .get("Uploads", []))


def test_ls_lists_the_uploads_under_the_prefix(client, s3_bucket, capsys):
    first = _start(client, s3_bucket, "run1/ckpt/a.pt")
    _start(client, s3_bucket, "run2/b.pt")
    assert main(["uploads", "ls", f"s3://{s3_bucket}/run1/"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].endswith(f"  s3://{s3_bucket}/run1/ckpt/a.pt  {first}")


def test_abort_aborts_only_under_the_prefix_and_only_old_ones(client, s3_bucket, capsys):
    _start(client, s3_bucket, "run1/a.pt")
    _start(client, s3_bucket, "run2/b.pt")
    # (moto dates every upload 2010-11-10: an age of a century keeps them on any server)
    assert main(["uploads", "abort", "--older-than", "36500d", f"s3://{s3_bucket}/run1/"]) == 0
    assert _left(client, s3_bucket) == ["run1/a.pt", "run2/b.pt"]
    assert main(["uploads", "abort", "--older-than", "0", f"s3://{s3_bucket}/run1/"]) == 0
    assert capsys.readouterr().out.startswith(f"aborted s3://{s3_bucket}/run1/a.pt  ")
    assert _left(client, s3_bucket) == ["run2/b.pt"]


def test_uploads_of_a_local_path_is_a_usage_error(tmp_path, capsys):
    assert main(["uploads", "ls", str(tmp_path)]) == 2
    assert "give s3://BUCKET/PREFIX" in capsys.readouterr().err


def test_ages():
    assert [parse_age(t) for t in ("90s", "30m", "6h", "2d", "15", "1.5h")] == \
        [90, 1800, 21600, 172800, 15, 5400]
    with pytest.raises(ValueError, match="not an age"):
        parse_age("soon")


def test_uploads_need_pfios_s3():
    """A filesystem that is not pfio's S3 (a scheme registered over s3://) has no uploads."""
    from pfio.fs.memory import MemoryFS
    from pfio.fs.s3.uploads import require_s3

    with pytest.raises(ValueError, match="not pfio's S3"):
        require_s3(MemoryFS())
