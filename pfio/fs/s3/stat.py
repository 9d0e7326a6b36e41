"""The :class:`FileStat` classes of S3: an object, or a prefix taken as a directory."""

from __future__ import annotations

from typing import Any

from ..stat import FileStat


class S3ObjectStat(FileStat):
    """An object: ``size``, ``last_modified``, ``etag`` (unquoted) and the user
    ``metadata`` when the response carries it.

    Args:
        key: the name to report.
        head: a ``HeadObject`` response or a ``ListObjectsV2`` entry (``ContentLength`` or
            ``Size``, ``LastModified`` (``last_modified`` None without it), ``ETag``,
            ``Metadata``).
    """

    def __init__(self, key: str, head: dict[str, Any]) -> None:
        modified = head.get("LastModified")  # (optional: some servers leave it out)
        super().__init__(key, head.get("ContentLength", head.get("Size", 0)),
                         last_modified=None if modified is None else modified.timestamp(),
                         etag=head.get("ETag", "").strip('"'))
        if "Metadata" in head:
            self.metadata = head["Metadata"]


class S3PrefixStat(FileStat):
    """A prefix (``key/``) taken as a directory: mode ``S_IFDIR``, size 0, no time."""

    def __init__(self, key: str) -> None:
        directory = FileStat.directory(key)
        super().__init__(key, directory.size, directory.mode)
