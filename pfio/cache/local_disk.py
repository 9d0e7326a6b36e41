"""Which filesystem holds a cache directory: the file caches refuse NFS, as PFIO 2.x did
(``flock`` and shared memory maps of a file are not coherent across NFS clients).

Two sources are asked, and either saying NFS is enough: the process's mount table, and
``stat -f -c %T`` (GNU coreutils), which is how PFIO 2.x asked (so that a test faking
``subprocess.run``, as PFIO's do with :func:`pfio.testing.patch_subprocess`, is answered
the same way).
"""

from __future__ import annotations

import os
import re
import subprocess

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


#: how long ``stat -f`` may take (a hung NFS server must not hang the cache's creation)
STAT_TIMEOUT = 10.0


def stat_filesystem_type(path: str) -> str | None:
    """The type that ``stat -f -c %T`` prints for the filesystem holding ``path`` (or its
    nearest existing parent): ``"nfs"``, ``"ext2/ext3"``, ``"tmpfs"``, ...; None where
    ``stat`` is missing, fails or takes longer than :data:`STAT_TIMEOUT`."""
    existing = os.path.abspath(path)
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    try:
        done = subprocess.run(["stat", "-f", "-c", "%T", existing], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=STAT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout
    text = out.decode(errors="replace") if isinstance(out, bytes) else str(out or "")
    return text.strip() or None if done.returncode == 0 else None


def check_local_disk(directory: str) -> None:
    """Raise ``ValueError`` when ``directory`` is on NFS (as the mount table or ``stat -f``
    says)."""
    for probe in (filesystem_type, stat_filesystem_type):
        kind = probe(directory)
        if kind is not None and "nfs" in kind:
            raise ValueError(f"a cache directory must be on a local disk, and {directory} "
                             f"is on {kind}")
