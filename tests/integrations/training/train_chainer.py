"""Chainer Trainer: PfioImageDataset from a zip on S3, PfioSnapshotWriter each epoch, autoload."""

import os
import sys
import time

import numpy as np

from pfio.integrations.chainer import PfioImageDataset, PfioSnapshotWriter, autoload, chainer

training = chainer.training  # chainer comes through pfio, which restores NumPy 2's np.sctypes
extensions = chainer.training.extensions

data_url, checkpoint_url, result_path = sys.argv[1:4]
pause_at = int(os.environ.get("PAUSE_AT_STEP", "-1"))


class Pause(training.Extension):
    trigger = (1, "iteration")

    def __call__(self, trainer):
        if trainer.updater.iteration == pause_at:
            print("paused", flush=True)
            time.sleep(600)


class EpochDone(training.Extension):
    trigger = (1, "epoch")
    priority = training.PRIORITY_READER

    def __call__(self, trainer):
        print(f"epoch {trainer.updater.epoch} done", flush=True)


chainer.config.train = True
np.random.seed(0)  # Chainer's initializers draw from NumPy's global generator
model = chainer.links.Classifier(chainer.Sequential(
    chainer.links.Convolution2D(3, 4, 3), chainer.functions.relu, chainer.links.Linear(None, 3)))
optimizer = chainer.optimizers.SGD(lr=0.05)
optimizer.setup(model)
iterator = chainer.iterators.SerialIterator(PfioImageDataset(data_url), 8, shuffle=False)
updater = training.updaters.StandardUpdater(iterator, optimizer)
trainer = training.Trainer(updater, (2, "epoch"), out=os.path.dirname(result_path))
trainer.extend(extensions.snapshot(writer=PfioSnapshotWriter(checkpoint_url, n_retains=2)),
               trigger=(1, "epoch"))
trainer.extend(EpochDone())
trainer.extend(Pause())
model(np.zeros((1, 3, 16, 16), np.float32), np.zeros(1, np.int32))  # shapes before loading
np.random.seed(0)
loaded = autoload(trainer, checkpoint_url)
if loaded:
    print(f"resumed at step {trainer.updater.iteration}", flush=True)
trainer.run()
with open(result_path, "wb") as f:
    np.savez(f, iteration=updater.iteration,
             **{name: param.array for name, param in model.namedparams()})
