"""``pfio mb``: make an S3 bucket (``pfio cp`` to a bucket that does not exist fails)."""

from __future__ import annotations

import errno
from typing import Any

from .._uri import parse_uri
from ..api import from_url
from .common import UsageError, add_command


def add_parsers(commands: Any) -> None:
    """Add ``mb`` to the ``pfio`` command's ``commands``."""
    parser = add_command(
        commands, "mb", "make an S3 bucket",
        "Make the bucket of s3://BUCKET (CreateBucket, in the region of the session: "
        "$AWS_DEFAULT_REGION or the profile's). A bucket that exists already is an error "
        "unless --exist-ok; so is one that another account owns. The endpoint and "
        "credentials are those every pfio S3 URL uses ($S3_ENDPOINT, the AWS environment "
        "and profiles).",
        "  pfio mb s3://my-new-bucket\n"
        "  S3_ENDPOINT=http://127.0.0.1:9000 pfio mb --exist-ok s3://scratch",
        lambda args: mb(args.url, exist_ok=args.exist_ok))
    parser.add_argument("url", metavar="s3://BUCKET", help="the bucket to make")
    parser.add_argument("--exist-ok", action="store_true",
                        help="no error when the bucket exists already")


def mb(url: str, exist_ok: bool = False) -> int:
    """Make the S3 bucket ``url`` names (``s3://bucket``).

    Raises:
        UsageError: ``url`` is not ``s3://BUCKET`` (no key or prefix after the name).
        FileExistsError: the bucket exists and ``exist_ok`` is false.
        PermissionError: the credentials may not see or make it (another account's
            bucket).
    """
    uri = parse_uri(url)
    if uri.scheme != "s3" or not uri.netloc or uri.path.strip("/"):
        raise UsageError(f"mb makes S3 buckets: give s3://BUCKET, not {url}")
    with from_url(f"s3://{uri.netloc}") as fs:
        exists = fs.isdir("")  # a listing of one key: the bucket answers, else NoSuchBucket
    if exists:
        if exist_ok:
            return 0
        raise FileExistsError(errno.EEXIST, "bucket already exists", f"s3://{uri.netloc}")
    from_url(f"s3://{uri.netloc}", create_bucket=True).close()  # HeadBucket, CreateBucket
    return 0
