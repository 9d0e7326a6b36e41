"""Which filesystem holds a cache directory: the file caches refuse NFS, as PFIO 2.x did
(``flock`` and shared memory maps of a file are not coherent across NFS clients)."""

from __future__ import annotations

import os
import re

#: where Linux lists the mounts of this process
MOUNTINFO = "/proc/self/mountinfo"

_OCTAL = re.compile(r"\\([0-7]{3})")


def filesystem_type(path: str, mountinfo: str | None = None) -> str | None:
    """The type (``"ext4"``, ``"tmpfs"``, ``"nfs4"``, ...) of the filesystem that holds
    ``path`` (which need not exist yet), or None where the mounts cannot be read."""
    try:
        with open(mountinfo or MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, found = -1, None
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        mount = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), parts[4])
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= best:  # the last of equal mounts is the visible one
            best, found = len(mount), rest.split()[0]
    return found


def check_local_disk(directory: str) -> None:
    """Raise ``ValueError`` when ``directory`` is on NFS."""
    kind = filesystem_type(directory)
    if kind is not None and kind.startswith("nfs"):
        raise ValueError(f"a cache directory must be on a local disk, and {directory} is on "
                         f"{kind}")
