"""pytorch-pfn-extras on S3 after ``pfio.patch_all()``: ``ExtensionsManager(out_dir=url)``
with its default writer (snapshots, ``LogReport``), ``autoload`` of the latest snapshot
(also among snapshots written in one second: S3 keeps whole seconds), and pfio's own
writer (:func:`pfio.integrations.torch.ppe.snapshot_writer`)."""

import json

import pytest

import pfio
from pfio.integrations.torch.ppe import snapshot_writer

from .one_second import write_in_one_second

torch = pytest.importorskip("torch")
ppe = pytest.importorskip("pytorch_pfn_extras")


def _manager(out_dir, epochs, iters=3, writer=None, **snapshot):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    manager = ppe.training.ExtensionsManager(model, optimizer, epochs, iters_per_epoch=iters,
                                             out_dir=out_dir, writer=writer)
    manager.extend(ppe.training.extensions.snapshot(**snapshot), trigger=(1, "epoch"))
    return manager, model, optimizer


def _train(manager, model, optimizer):
    while not manager.stop_trigger:
        with manager.run_iteration():
            optimizer.zero_grad()
            model(torch.ones(2, 4)).sum().backward()
            optimizer.step()


def _names(url):
    return sorted(pfio.from_url(url).list())


def test_default_writer_writes_snapshots_to_s3(s3_url, tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    manager, model, optimizer = _manager(s3_url, epochs=2)
    _train(manager, model, optimizer)
    assert _names(s3_url) == ["snapshot_iter_3", "snapshot_iter_6"]
    assert list((tmp_path / "cwd").iterdir()) == []  # nothing under the working directory


def test_default_writer_retains_and_autoloads_the_latest(s3_url):
    manager, model, optimizer = _manager(s3_url, epochs=4, iters=1, n_retains=2)
    _train(manager, model, optimizer)
    assert _names(s3_url) == ["snapshot_iter_3", "snapshot_iter_4"]
    resumed, fresh, _ = _manager(s3_url, epochs=4, iters=1, autoload=True)
    with resumed.run_iteration():
        pass
    assert resumed.iteration == 5
    assert torch.equal(fresh.weight, model.weight)


def test_autoload_picks_the_latest_of_one_second(s3_url):
    """Snapshots 9 and 10 written in one second: the whole-second times tie, and the
    names sort ``snapshot_iter_10`` first; the latest is still 10."""
    manager, model, optimizer = _manager(s3_url, epochs=10, iters=1)
    _train(manager, model, optimizer)
    times = {pfio.from_url(s3_url).stat(n).last_modified for n in _names(s3_url)}
    resumed, fresh, _ = _manager(s3_url, epochs=10, iters=1, autoload=True)
    with resumed.run_iteration():
        pass
    assert resumed.iteration == 11, times
    assert torch.equal(fresh.weight, model.weight)


def test_log_report_writes_to_s3(s3_url):
    manager, model, optimizer = _manager(s3_url, epochs=2)
    manager.extend(ppe.training.extensions.LogReport(trigger=(1, "epoch")))
    _train(manager, model, optimizer)
    with pfio.open_url(f"{s3_url}/log") as f:
        assert [entry["epoch"] for entry in json.load(f)] == [1, 2]


def test_pfio_writer_autoloads_the_latest_of_one_second_without_patches(s3_unpatched):
    url = s3_unpatched
    manager, model, optimizer = _manager("unused", 10, 1, snapshot_writer(url))
    _train(manager, model, optimizer)
    resumed, fresh, _ = _manager("unused", 10, 1, snapshot_writer(url), autoload=True)
    with resumed.run_iteration():
        pass
    assert resumed.iteration == 11
    assert torch.equal(fresh.weight, model.weight)


@pytest.mark.parametrize("names", [["snapshot_iter_9", "snapshot_iter_10"],
                                   ["snapshot_iter_10", "snapshot_iter_9"]])
def test_patched_choice_of_one_second_is_the_highest_number(s3_url, names):
    from pytorch_pfn_extras.training.extensions import _snapshot
    from pytorch_pfn_extras.writing._writer_base import _PosixFileSystem

    write_in_one_second(s3_url, names)
    assert _snapshot._find_latest_snapshot("snapshot_iter_{.iteration}", s3_url,
                                           _PosixFileSystem()) == "snapshot_iter_10"


def test_pfio_writer_choice_of_one_second_is_the_highest_number(s3_unpatched):
    from pytorch_pfn_extras.training.extensions import _snapshot

    write_in_one_second(s3_unpatched, ["snapshot_iter_10", "snapshot_iter_9"])
    fs = snapshot_writer(s3_unpatched).fs
    assert _snapshot._find_latest_snapshot("snapshot_iter_{.iteration}", "", fs) == \
        "snapshot_iter_10"
    assert list(_snapshot._find_stale_snapshots("snapshot_iter_{.iteration}", "", 1, fs)) == \
        ["snapshot_iter_9"]


def test_snapshot_times_compare_as_floats_with_other_numbers():
    from pfio.integrations.torch.ppe import SnapshotTime

    nine, ten = SnapshotTime(5.0, "snapshot_iter_9"), SnapshotTime(5.0, "snapshot_iter_10")
    assert nine < ten and ten > nine and nine != ten and nine <= ten
    assert nine == 5.0 and ten < 6 and 4.5 < nine
    assert SnapshotTime(6.0, "snapshot_iter_1") > ten
