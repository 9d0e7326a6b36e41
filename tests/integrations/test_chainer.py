import numpy as np
import pytest

import pfio
from pfio.integrations.chainer import PfioImageDataset, PfioSnapshotWriter, autoload

from .images import color, write_image_tree

chainer = pytest.importorskip("chainer")
from chainer import training  # noqa: E402
from chainer.training import extensions  # noqa: E402


@pytest.fixture
def tree(request):
    url = f"mem://chainer-{request.node.name}/train"
    return url, write_image_tree(pfio.from_url(url))


def test_examples_follow_chainer_conventions(tree):
    url, items = tree
    dataset = PfioImageDataset(url)
    image, label = dataset[4]
    assert (image.dtype, image.shape, label.dtype, int(label)) == (
        np.float32, (3, 8, 8), np.int32, 1)
    assert tuple(image[:, 0, 0]) == color(1, 0)
    assert len(dataset) == len(items)


def _trainer(dataset, out, epochs):
    model = chainer.links.Classifier(chainer.links.Linear(None, 3))
    optimizer = chainer.optimizers.SGD(lr=0.01)
    optimizer.setup(model)
    iterator = chainer.iterators.SerialIterator(dataset, batch_size=4, shuffle=False)
    updater = training.updaters.StandardUpdater(iterator, optimizer)
    return training.Trainer(updater, (epochs, "epoch"), out=out), model


def test_snapshots_are_written_retained_and_autoloaded(tree, tmp_path):
    url, _ = tree
    snapshots = f"mem://chainer-snapshots-{tmp_path.name}/run"
    trainer, model = _trainer(PfioImageDataset(url), str(tmp_path), epochs=3)
    trainer.extend(extensions.snapshot(writer=PfioSnapshotWriter(snapshots, n_retains=2)),
                   trigger=(1, "epoch"))
    trainer.run()
    names = sorted(pfio.from_url(snapshots).list())
    assert names == ["snapshot_iter_6", "snapshot_iter_9"]

    resumed, resumed_model = _trainer(PfioImageDataset(url), str(tmp_path), epochs=3)
    assert autoload(resumed, snapshots) == "snapshot_iter_9"
    assert resumed.updater.iteration == 9
    np.testing.assert_array_equal(resumed_model.predictor.W.array, model.predictor.W.array)


def test_autoload_without_snapshots_returns_none(tree, tmp_path):
    url, _ = tree
    trainer, _ = _trainer(PfioImageDataset(url), str(tmp_path), epochs=1)
    assert autoload(trainer, "mem://chainer-none/nothing") is None
