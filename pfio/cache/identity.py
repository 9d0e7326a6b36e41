"""Cache keys: a name for a file that differs between filesystems, buckets, endpoints and
archives, so that two sources never share a cache entry."""

from __future__ import annotations

import hashlib
import os
import posixpath

from ..fs.base import FS

#: attributes of a filesystem that tell two otherwise equal paths apart
_DISTINGUISHING = ("endpoint", "endpoint_url", "bucket", "name")


def source_identity(fs: FS, path: str) -> str:
    """A string naming the file ``path`` of ``fs`` uniquely: its URL (absolute for local
    files), the filesystem's endpoint, bucket and store name, and for an archive member
    the identity of the archive file."""
    from ..containers.base import ArchiveFS
    from .cached_fs import CachedFS

    if isinstance(fs, CachedFS):
        return source_identity(fs.fs, path)
    if isinstance(fs, ArchiveFS):
        inner = posixpath.join(fs.root, path) if fs.root else path
        return f"{source_identity(fs.backend, fs.file_path)}!/{inner}"
    described = fs._describe(path)
    if fs.scheme in ("", "file"):
        return "file://" + os.path.abspath(described)
    extras = []
    for attr in _DISTINGUISHING:
        value = getattr(fs, attr, None)
        if isinstance(value, str) and value:
            extras.append(f"{attr}={value}")
    return described + ("|" + "|".join(extras) if extras else "")


def cache_key(identity: str) -> str:
    """The file-name-safe key of an identity (a SHA-256 hex digest)."""
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()
