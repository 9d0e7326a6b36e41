"""``pfio uploads ls|abort``: the multipart uploads in progress under an S3 prefix (a killed
upload's stay, billed, until aborted; see :mod:`pfio.fs.s3.uploads`)."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

from .._uri import parse_uri
from ..api import from_url
from .common import UsageError, add_command

if TYPE_CHECKING:
    from ..fs.base import FS
    from ..fs.s3 import S3

_AGE = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def add_parsers(commands: Any) -> None:
    """Add ``uploads`` (``ls``, ``abort``) to the ``pfio`` command's ``commands``."""
    parser = add_command(
        commands, "uploads", "list or abort unfinished S3 multipart uploads",
        "Multipart uploads in progress under s3://BUCKET/PREFIX (PREFIX is a plain key "
        "prefix). A process killed while it uploads a large object leaves its upload "
        "behind, invisible in listings and billed until it is aborted. 'ls' lists them "
        "(started, key, upload id); 'abort' aborts those started more than --older-than "
        "ago (default 1d; 0 aborts all, including uploads running now). A bucket "
        "lifecycle rule (AbortIncompleteMultipartUpload) does the same for a whole bucket.",
        "  pfio uploads ls s3://bucket/run1/\n"
        "  pfio uploads abort --older-than 6h s3://bucket/run1/checkpoints/",
        lambda args: args.action_handler(args))
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = actions.add_parser("ls", help="list the uploads in progress")
    ls.set_defaults(action_handler=lambda args: ls_uploads(args.url))
    ls.add_argument("url", metavar="s3://BUCKET/PREFIX")
    abort = actions.add_parser("abort", help="abort the uploads older than --older-than")
    abort.set_defaults(action_handler=lambda args: abort_old(args.url, args.older_than))
    abort.add_argument("url", metavar="s3://BUCKET/PREFIX")
    abort.add_argument("--older-than", default="1d", type=parse_age, metavar="AGE",
                       help="90s, 30m, 6h, 2d or seconds (default 1d)")


def parse_age(text: str) -> float:
    """Seconds from ``90s``, ``30m``, ``6h``, ``2d`` or a number of seconds."""
    match = _AGE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not an age: {text!r} (90s, 30m, 6h, 2d)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _split(url: str) -> tuple[str, str]:
    uri = parse_uri(url)
    if uri.scheme != "s3" or not uri.netloc:
        raise UsageError(f"uploads are S3's: give s3://BUCKET/PREFIX, not {url}")
    return f"s3://{uri.netloc}", uri.path.lstrip("/")


def _s3(fs: FS, bucket: str) -> S3:
    """``fs``, the filesystem of ``bucket``, as pfio's S3 (uploads are its own)."""
    from ..fs.s3.uploads import require_s3

    try:
        return require_s3(fs)
    except ValueError:
        raise UsageError(f"{bucket} is served by {type(fs).__name__}, not pfio's S3: "
                         "it has no uploads") from None


def ls_uploads(url: str) -> int:
    """Print the uploads in progress under ``url``: started (UTC), key, upload id."""
    from ..fs.s3.uploads import list_uploads

    bucket, prefix = _split(url)
    with from_url(bucket) as fs:
        for upload in list_uploads(_s3(fs, bucket), prefix):
            sys.stdout.write(f"{upload.initiated:%Y-%m-%d %H:%M:%S}  {upload.url}  "
                             f"{upload.upload_id}\n")
    return 0


def abort_old(url: str, older_than: float) -> int:
    """Abort the uploads under ``url`` started more than ``older_than`` seconds ago; print
    each one aborted."""
    from ..fs.s3.uploads import abort_uploads

    bucket, prefix = _split(url)
    with from_url(bucket) as fs:
        for upload in abort_uploads(_s3(fs, bucket), prefix, older_than):
            sys.stdout.write(f"aborted {upload.url}  {upload.upload_id}\n")
    return 0
