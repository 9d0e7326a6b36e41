"""The file caches refuse a directory on NFS, as PFIO 2.x did; the filesystem type comes from
the process's mount table and from ``stat -f`` (which PFIO 2.x asked)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import pfio
import pfio.cache.file_cache
from pfio.cache import local_disk
from pfio.testing import patch_subprocess

MOUNTS = r"""22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:40 / /data rw shared:2 - nfs4 server:/export rw,vers=4.2
31 30 0:41 / /data/scratch rw shared:3 - tmpfs tmpfs rw
32 22 0:42 / /mnt/with\040space rw shared:4 - nfs server:/b rw
"""


@pytest.fixture
def mountinfo(tmp_path, monkeypatch):
    path = tmp_path / "mountinfo"
    path.write_text(MOUNTS)
    monkeypatch.setattr(local_disk, "MOUNTINFO", str(path))
    return str(path)


@pytest.mark.parametrize("path, kind", [
    ("/home/u/.cache/pfio", "ext4"),
    ("/data/train/cache", "nfs4"),
    ("/data", "nfs4"),
    ("/data/scratch/c", "tmpfs"),
    ("/database", "ext4"),
    ("/mnt/with space/c", "nfs"),
])
def test_filesystem_type_is_the_innermost_mount(mountinfo, path, kind):
    assert local_disk.filesystem_type(path) == kind


def test_unreadable_mount_table_is_unknown(tmp_path):
    assert local_disk.filesystem_type("/", str(tmp_path / "missing")) is None


def test_this_machine_has_a_mount_table(tmp_path):
    assert local_disk.filesystem_type(str(tmp_path)) not in (None, "nfs", "nfs4")


@pytest.mark.parametrize("name", ["FileCache", "MultiprocessFileCache"])
def test_file_caches_refuse_nfs(mountinfo, name):
    with pytest.raises(ValueError, match="/data/cache is on nfs4"):
        getattr(pfio.cache, name)(4, dir="/data/cache")


def test_file_caches_take_a_local_disk(mountinfo, tmp_path):
    with pfio.cache.FileCache(2, dir=str(tmp_path)) as cache:
        assert cache.put(0, b"ok")


# -- stat -f, as PFIO 2.x asked ------------------------------------------------------------

@pytest.mark.parametrize("name", ["FileCache", "MultiprocessFileCache"])
def test_file_caches_refuse_what_stat_calls_nfs(tmp_path, name):
    @patch_subprocess(b"nfs\n")
    def make():
        return getattr(pfio.cache, name)(4, dir=str(tmp_path / "var"))

    with pytest.raises(ValueError, match="is on nfs"):
        make()


@pytest.mark.parametrize("name", ["FileCache", "MultiprocessFileCache"])
def test_pfio2_force_local_switch_lets_a_cache_on_nfs(tmp_path, monkeypatch, name):
    monkeypatch.setattr(pfio.cache.file_cache, "_FORCE_LOCAL", False)

    @patch_subprocess(b"nfs")
    def make():
        return getattr(pfio.cache, name)(4, dir=str(tmp_path))

    with make() as cache:
        assert cache.put(0, b"on nfs after all")


def test_stat_is_asked_about_the_nearest_existing_directory(tmp_path):
    @patch_subprocess(b"ext2/ext3\n")
    def ask():
        assert local_disk.stat_filesystem_type(str(tmp_path / "a" / "b")) == "ext2/ext3"
        return subprocess.run.call_args

    call = ask()
    assert call.args[0] == ["stat", "-f", "-c", "%T", str(tmp_path)]
    assert call.kwargs["timeout"] == local_disk.STAT_TIMEOUT


def test_a_missing_or_failing_stat_tells_nothing(tmp_path, monkeypatch):
    def missing(*args, **kwargs):
        raise FileNotFoundError("stat")

    monkeypatch.setattr(subprocess, "run", missing)
    assert local_disk.stat_filesystem_type(str(tmp_path)) is None
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a, 1, stdout=b"nfs"))
    assert local_disk.stat_filesystem_type(str(tmp_path)) is None


@pytest.mark.skipif(shutil.which("stat") is None, reason="no stat(1) here")
def test_this_machine_answers_stat(tmp_path):
    assert local_disk.stat_filesystem_type(str(tmp_path)) not in (None, "nfs")
