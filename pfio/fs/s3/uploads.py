"""Multipart uploads in progress under a prefix: list them, abort the stale ones.

A process killed while it writes a large object (a checkpoint) leaves its multipart upload
behind: invisible in listings, never completed, its parts billed until someone aborts it.
S3's lifecycle rule ``AbortIncompleteMultipartUpload`` does that for a whole bucket; these
functions do it for a prefix, from pfio (``pfio uploads ls|abort``, and the checkpoint
writers at start, for uploads older than a save could take).
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .retry import call

if TYPE_CHECKING:
    from ..base import FS
    from .engine import UploadsPage
    from .filesystem import S3

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Upload:
    """A multipart upload in progress."""

    url: str
    key: str
    upload_id: str
    #: when it was started (timezone-aware, UTC)
    initiated: dt.datetime

    def age(self, now: dt.datetime | None = None) -> float:
        """Seconds since it was started."""
        return ((now or dt.datetime.now(dt.timezone.utc)) - self.initiated).total_seconds()


def _full_prefix(fs: S3, prefix: str) -> str:
    return f"{fs.root}/{prefix}" if fs.root else prefix


def require_s3(fs: FS) -> S3:
    """``fs`` as pfio's S3, whose uploads the functions here list and abort.

    Raises:
        ValueError: ``fs`` is another filesystem.
    """
    from .filesystem import S3

    if not isinstance(fs, S3):
        raise ValueError(f"{fs!r} is not pfio's S3: multipart uploads are S3's")
    return fs


def list_uploads(fs: S3, prefix: str = "") -> list[Upload]:
    """The multipart uploads in progress whose keys start with ``prefix`` (a plain string
    after ``fs``'s root and a slash: ``""`` lists those under the root), oldest first.

    Raises:
        PermissionError, FileNotFoundError, OSError: as S3's ListMultipartUploads answers.
    """
    conn = fs.connection
    full = _full_prefix(fs, prefix)
    found: list[Upload] = []
    markers: dict[str, str] = {}
    while True:
        def list_page(markers: dict[str, str] = markers) -> UploadsPage:
            return conn.engine().list_multipart_uploads(conn.bucket, full, **markers)

        page = call(conn.retry, "GET", conn.url(full), list_page)
        for upload in page.uploads:
            # an upload the server gives no start time for is taken as just started:
            # never old enough to be aborted as stale
            initiated = upload.initiated or dt.datetime.now(dt.timezone.utc)
            if initiated.tzinfo is None:
                initiated = initiated.replace(tzinfo=dt.timezone.utc)
            found.append(Upload(conn.url(upload.key), upload.key, upload.upload_id,
                                initiated))
        if not page.truncated:
            break
        following = {"key_marker": page.next_key_marker,
                     "upload_id_marker": page.next_upload_id_marker}
        if not following["key_marker"] or following == markers:
            raise OSError(f"{conn.url(full)}: the server's list of multipart uploads is "
                          f"truncated without a new marker to go on from ({following})")
        markers = following
    return sorted(found, key=lambda u: (u.initiated, u.key))


def abort_upload(fs: S3, upload: Upload) -> bool:
    """Abort ``upload``; False when it was gone already (completed or aborted)."""
    conn = fs.connection
    try:
        call(conn.retry, "DELETE", upload.url, lambda: conn.engine().abort_multipart_upload(
            conn.bucket, upload.key, upload.upload_id))
    except FileNotFoundError:
        return False
    return True


def abort_uploads(fs: S3, prefix: str = "", older_than: float = 0.0) -> list[Upload]:
    """Abort the uploads of :func:`list_uploads` started more than ``older_than`` seconds
    ago; returns those aborted."""
    now = dt.datetime.now(dt.timezone.utc)
    aborted = []
    for upload in list_uploads(fs, prefix):
        if upload.age(now) >= older_than and abort_upload(fs, upload):
            logger.info("aborted the multipart upload %s of %s (started %s)",
                        upload.upload_id, upload.url, upload.initiated.isoformat())
            aborted.append(upload)
    return aborted
