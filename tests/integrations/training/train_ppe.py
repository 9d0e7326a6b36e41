"""pytorch-pfn-extras: ExtensionsManager with a snapshot to S3 each epoch and autoload."""

import os
import sys
import time

import pytorch_pfn_extras as ppe
import torch
from common import batches, make_model, to_tensor

from pfio.integrations.torch import PfioImageDataset
from pfio.integrations.torch.ppe import snapshot_writer

data_url, checkpoint_url, result_path = sys.argv[1:4]
pause_at = int(os.environ.get("PAUSE_AT_STEP", "-1"))
dataset = PfioImageDataset(data_url, transform=to_tensor)
model, optimizer = make_model()
iters_per_epoch = len(list(batches(dataset, 0, workers=0)))
manager = ppe.training.ExtensionsManager(model, optimizer, 2, iters_per_epoch=iters_per_epoch)
manager.extend(ppe.training.extensions.snapshot(writer=snapshot_writer(checkpoint_url),
                                                autoload=True, n_retains=2),
               trigger=(1, "epoch"))
loss_fn = torch.nn.CrossEntropyLoss()
if not manager.stop_trigger and manager.iteration:  # the first look starts autoload
    print(f"resumed at step {manager.iteration}", flush=True)
while not manager.stop_trigger:
    epoch = manager.iteration // iters_per_epoch
    for images, labels in batches(dataset, epoch):
        with manager.run_iteration():
            if manager.iteration == pause_at:  # the 0-based step, counted after the body
                print("paused", flush=True)
                time.sleep(600)
            optimizer.zero_grad()
            loss_fn(model(images), labels).backward()
            optimizer.step()
        if manager.iteration % iters_per_epoch == 0:
            print(f"epoch {manager.iteration // iters_per_epoch} done", flush=True)
            break
torch.save({"iteration": manager.iteration, "model": model.state_dict()}, result_path)
