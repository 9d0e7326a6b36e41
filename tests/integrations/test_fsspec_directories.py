"""Directories made through the fsspec bridge on S3, which keeps none: they are (empty)
directories for the rest of the process, until removed through the bridge."""

from __future__ import annotations

import pytest

pytest.importorskip("fsspec")

import pfio  # noqa: E402
from pfio.integrations.fsspec import PfioFileSystem  # noqa: E402


def test_a_made_directory_is_one(bridge, s3):
    bridge.makedirs(f"{s3}/logs/version_0", exist_ok=True)
    assert bridge.isdir(f"{s3}/logs/version_0")
    assert bridge.exists(f"{s3}/logs/version_0")
    assert bridge.info(f"{s3}/logs/version_0")["type"] == "directory"
    assert not bridge.isfile(f"{s3}/logs/version_0")


def test_its_parents_are_directories_too(bridge, s3):
    bridge.makedirs(f"{s3}/a/b/c")
    assert bridge.isdir(f"{s3}/a") and bridge.isdir(f"{s3}/a/b")


def test_mkdir_makes_one(bridge, s3):
    bridge.mkdir(f"{s3}/made", create_parents=False)
    assert bridge.isdir(f"{s3}/made")


def test_it_lists_empty_and_shows_in_its_parent(bridge, s3):
    bridge.pipe_file(f"{s3}/logs/version_0/metrics.csv", b"x")
    bridge.makedirs(f"{s3}/logs/version_1")
    assert bridge.ls(f"{s3}/logs/version_1") == []
    assert bridge.ls(f"{s3}/logs", detail=False) == [
        f"{s3[7:]}/logs/version_0", f"{s3[7:]}/logs/version_1"]


def test_nothing_is_written_to_the_store(bridge, s3):
    bridge.makedirs(f"{s3}/empty")
    assert list(pfio.from_url(f"s3://{s3[10:]}").list(recursive=True)) == []


def test_other_instances_of_the_bridge_see_it(bridge, s3):
    bridge.makedirs(f"{s3}/shared")
    assert PfioFileSystem(skip_instance_cache=True).isdir(f"{s3}/shared")


def test_writing_a_file_over_it_is_an_error(bridge, s3):
    bridge.makedirs(f"{s3}/dir")
    with pytest.raises(IsADirectoryError, match="dir"):
        bridge.pipe_file(f"{s3}/dir", b"x")


def test_rmdir_removes_it(bridge, s3):
    bridge.makedirs(f"{s3}/gone")
    bridge.rmdir(f"{s3}/gone")
    assert not bridge.exists(f"{s3}/gone")


def test_rmdir_of_one_with_a_made_child_is_refused(bridge, s3):
    bridge.makedirs(f"{s3}/p/child")
    with pytest.raises(OSError, match="not empty"):
        bridge.rmdir(f"{s3}/p")


def test_recursive_rm_removes_it_and_what_is_below(bridge, s3):
    bridge.makedirs(f"{s3}/tree/x/y")
    bridge.pipe_file(f"{s3}/tree/f", b"1")
    bridge.rm(f"{s3}/tree", recursive=True)
    assert not bridge.exists(f"{s3}/tree") and not bridge.exists(f"{s3}/tree/x/y")


def test_rm_of_an_empty_made_directory(bridge, s3):
    bridge.makedirs(f"{s3}/lonely")
    bridge.rm(f"{s3}/lonely", recursive=True)
    assert not bridge.isdir(f"{s3}/lonely")


def test_rmdir_of_a_missing_path_still_raises(bridge, s3):
    with pytest.raises(NotADirectoryError):
        bridge.rmdir(f"{s3}/never-made")


def test_on_a_store_with_directories_nothing_is_remembered(bridge, tmp_path):
    bridge.makedirs(f"pfio://file{tmp_path}/real")
    (tmp_path / "real").rmdir()
    assert not bridge.isdir(f"pfio://file{tmp_path}/real")


def test_removing_one_keeps_the_parents_makedirs_made(bridge, s3):
    bridge.makedirs(f"{s3}/a/b/c")
    bridge.rmdir(f"{s3}/a/b/c")
    assert bridge.isdir(f"{s3}/a/b") and not bridge.exists(f"{s3}/a/b/c")


def test_mv_of_an_empty_made_directory_moves_it(bridge, s3):
    bridge.makedirs(f"{s3}/old/sub")
    bridge.mv(f"{s3}/old", f"{s3}/new", recursive=True)
    assert bridge.isdir(f"{s3}/new/sub") and not bridge.exists(f"{s3}/old")


# -- one record with the os and shutil patches (pfio.fs.made_directories) ---------------------


@pytest.fixture
def patched_os():
    with pfio.patched("shutil"):
        yield


def test_a_directory_made_by_os_makedirs_is_one_to_the_bridge(bridge, s3, patched_os):
    import os

    os.makedirs(f"s3://{s3[10:]}/logs/version_0")
    assert bridge.isdir(f"{s3}/logs/version_0") and bridge.isdir(f"{s3}/logs")
    assert bridge.ls(f"{s3}/logs", detail=False) == [f"{s3[7:]}/logs/version_0"]


def test_a_directory_made_through_the_bridge_is_one_to_os(bridge, s3, patched_os):
    import os

    bridge.makedirs(f"{s3}/ckpt/epoch_1")
    url = f"s3://{s3[10:]}/ckpt"
    assert os.path.isdir(f"{url}/epoch_1") and os.listdir(url) == ["epoch_1"]
    with pytest.raises(FileExistsError):
        os.mkdir(f"{url}/epoch_1")


def test_a_removal_through_one_face_is_seen_by_the_other(bridge, s3, patched_os):
    import os
    import shutil

    url = f"s3://{s3[10:]}"
    os.makedirs(f"{url}/by_os")
    bridge.makedirs(f"{s3}/by_bridge")
    bridge.rm(f"{s3}/by_os", recursive=True)
    shutil.rmtree(f"{url}/by_bridge")
    assert not os.path.exists(f"{url}/by_os") and not bridge.exists(f"{s3}/by_bridge")


def test_one_directory_in_every_spelling(bridge, s3, patched_os):
    import os

    os.mkdir(f"s3://{s3[10:]}/x/../spelt/")
    assert bridge.isdir(f"{s3}/spelt/") and bridge.isdir(f"{s3}/spelt")
