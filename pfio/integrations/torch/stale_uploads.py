"""Aborting the multipart uploads a killed save left under a checkpoint directory (see
:mod:`pfio.fs.s3.uploads`), for :class:`~pfio.integrations.torch.checkpoints.CheckpointManager`
and :class:`~pfio.integrations.torch.dcp.PfioWriter` when they start."""

from __future__ import annotations

import logging
from typing import Any

from ...api import from_url
from ...trace.redact import redact

logger = logging.getLogger(__name__)

#: uploads older than this (seconds) under a checkpoint directory are a killed save's: a
#: day, as the usual lifecycle rule (no save of one checkpoint takes that long)
STALE_UPLOAD_AGE = 24 * 3600.0


def abort_stale_uploads(url: str, older_than: float | None,
                        options: dict[str, Any] | None = None) -> int:
    """Abort the multipart uploads under the directory ``url`` (S3 only) started more than
    ``older_than`` seconds ago (None: none); returns how many. Failing to list or abort
    them is logged, not raised: it must not stop a save."""
    if older_than is None or not url.startswith("s3://"):
        return 0
    from ...fs.s3.uploads import abort_uploads, require_s3

    try:
        with from_url(url, **(options or {})) as fs:
            aborted = abort_uploads(require_s3(fs), "", older_than)
    except OSError as exc:
        logger.warning("could not look for stale multipart uploads under %s: %s",
                       redact(url), exc)
        return 0
    if aborted:
        logger.warning("aborted %d multipart upload(s) older than %gs under %s (left by "
                       "a killed save)", len(aborted), older_than, redact(url))
    return len(aborted)
