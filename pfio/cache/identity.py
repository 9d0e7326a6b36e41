"""Cache keys: a name for a file that differs between filesystems, buckets, endpoints,
readers and archives, so that two sources never share a cache entry."""

from __future__ import annotations

from ..digests import sha256_hex
from ..fs.base import FS


def source_identity(fs: FS, path: str) -> str:
    """A string naming the file ``path`` of ``fs`` and who reads it (see
    :meth:`pfio.FS.identity`): the backends say what makes their data distinct."""
    return fs.identity(path)


def cache_key(identity: str) -> str:
    """The file-name-safe key of an identity (a SHA-256 hex digest)."""
    return sha256_hex(identity.encode("utf-8", "surrogatepass"))
