"""Chainer's own training extensions on S3 after ``pfio.patch_all()``: ``Trainer(out=url)``
with ``extensions.snapshot()`` and ``LogReport``, ``serializers.save_npz``/``load_npz``."""

import json

import numpy as np
import pytest

import pfio
from pfio.integrations.chainer.compat import import_chainer

from .one_second import write_in_one_second

try:
    chainer = import_chainer()  # Chainer 7.8.1 on NumPy 2
except ImportError:
    pytest.skip("needs Chainer", allow_module_level=True)
from chainer import training  # noqa: E402
from chainer.training import extensions  # noqa: E402


def _trainer(out, epochs=2):
    model = chainer.links.Classifier(chainer.links.Linear(4, 3))
    optimizer = chainer.optimizers.SGD(lr=0.1)
    optimizer.setup(model)
    data = chainer.datasets.TupleDataset(np.ones((8, 4), np.float32),
                                         np.arange(8, dtype=np.int32) % 3)
    iterator = chainer.iterators.SerialIterator(data, batch_size=4, shuffle=False)
    updater = training.updaters.StandardUpdater(iterator, optimizer)
    return training.Trainer(updater, (epochs, "epoch"), out=out), model


def _names(url):
    return sorted(pfio.from_url(url).list())


def test_snapshot_extension_writes_to_s3(s3_url):
    trainer, _ = _trainer(s3_url)
    trainer.extend(extensions.snapshot(), trigger=(1, "epoch"))
    trainer.run()
    assert _names(s3_url) == ["snapshot_iter_2", "snapshot_iter_4"]


def test_log_report_writes_to_s3(s3_url):
    trainer, _ = _trainer(s3_url)
    trainer.extend(extensions.LogReport(trigger=(1, "epoch")))
    trainer.run()
    with pfio.open_url(f"{s3_url}/log") as f:
        log = json.load(f)
    assert [entry["epoch"] for entry in log] == [1, 2]
    assert _names(s3_url) == ["log"]


@pytest.mark.parametrize("names", [["snapshot_iter_9", "snapshot_iter_10"],
                                   ["snapshot_iter_10", "snapshot_iter_9"]])
def test_autoload_choice_of_one_second_is_the_highest_number(s3_url, names):
    from chainer.training.extensions import _snapshot

    write_in_one_second(s3_url, names)
    assert _snapshot._find_latest_snapshot("snapshot_iter_{.updater.iteration}", s3_url) == \
        "snapshot_iter_10"


def test_snapshots_are_retained_and_autoloaded_from_s3(s3_url):
    trainer, model = _trainer(s3_url, epochs=5)
    trainer.extend(extensions.snapshot(n_retains=2), trigger=(1, "epoch"))
    trainer.run()
    assert _names(s3_url) == ["snapshot_iter_10", "snapshot_iter_8"]
    resumed, resumed_model = _trainer(s3_url, epochs=6)
    resumed.extend(extensions.snapshot(autoload=True), trigger=(1, "epoch"), name="snap")
    resumed.get_extension("snap").initialize(resumed)  # what Trainer.run does first
    assert resumed.updater.iteration == 10
    np.testing.assert_array_equal(resumed_model.predictor.W.array, model.predictor.W.array)


def test_save_npz_and_load_npz_on_s3(s3_url):
    model = chainer.links.Linear(4, 3)
    chainer.serializers.save_npz(f"{s3_url}/model.npz", model)
    loaded = chainer.links.Linear(4, 3)
    chainer.serializers.load_npz(f"{s3_url}/model.npz", loaded)
    np.testing.assert_array_equal(loaded.W.array, model.W.array)
