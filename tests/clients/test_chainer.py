"""Chainer's own training extensions on S3 after ``pfio.patch_all()``: ``Trainer(out=url)``
with ``extensions.snapshot()`` and ``LogReport``, ``serializers.save_npz``/``load_npz``."""

import json

import numpy as np
import pytest

import pfio
from pfio.integrations.chainer_compat import import_chainer

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
