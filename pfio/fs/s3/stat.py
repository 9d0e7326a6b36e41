"""The :class:`FileStat` classes of S3: an object, or a prefix taken as a directory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..stat import FileStat
from .engine import Entry, Head


class S3ObjectStat(FileStat):
    """An object: ``size``, ``last_modified``, ``etag`` (unquoted) and, from a HEAD, the
    user ``metadata``.

    Args:
        key: the name to report.
        head: the object's :class:`~pfio.fs.s3.engine.Head`, or its entry of a listing
            page; or, as PFIO 2.x took it, botocore's ``head_object`` answer or
            ``list_objects_v2`` entry (a mapping with ``ContentLength`` or ``Size``,
            ``LastModified``, ``ETag``, ``Metadata``).
    """

    def __init__(self, key: str, head: Head | Entry | Mapping[str, Any]) -> None:
        if isinstance(head, Entry):
            modified, size, etag, metadata = head.last_modified, head.size, head.etag, None
        elif isinstance(head, Head):
            modified, size, etag = head.last_modified, head.size, head.etag
            metadata = head.metadata
        else:  # (PFIO 2.x's callers: botocore's answer)
            modified = head.get("LastModified")
            size = head.get("ContentLength", head.get("Size", 0))
            etag, metadata = head.get("ETag", ""), head.get("Metadata")
        super().__init__(key, size,
                         last_modified=None if modified is None else modified.timestamp(),
                         etag=etag.strip('"'))
        if metadata is not None:
            self.metadata = metadata


class S3PrefixStat(FileStat):
    """A prefix (``key/``) taken as a directory: mode ``S_IFDIR``, size 0, no time."""

    def __init__(self, key: str) -> None:
        directory = FileStat.directory(key)
        super().__init__(key, directory.size, directory.mode)
