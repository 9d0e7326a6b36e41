"""Plain PyTorch loop: PfioImageDataset from a zip on S3, CheckpointManager on S3 each epoch."""

import os
import sys
import time

import torch
from common import batches, make_model, to_tensor

from pfio.integrations.torch import CheckpointManager, PfioImageDataset

data_url, checkpoint_url, result_path = sys.argv[1:4]
pause_at = int(os.environ.get("PAUSE_AT_STEP", "-1"))
dataset = PfioImageDataset(data_url, transform=to_tensor)
model, optimizer = make_model()
manager = CheckpointManager(checkpoint_url, keep_last=2)
start, step = 0, 0
state = manager.load_latest()
if state is not None:
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start, step = state["epoch"], state["step"]
    print(f"resumed at step {step}", flush=True)
loss_fn = torch.nn.CrossEntropyLoss()
for epoch in range(start, 2):
    for images, labels in batches(dataset, epoch):
        if step == pause_at:
            print("paused", flush=True)
            time.sleep(600)
        optimizer.zero_grad()
        loss_fn(model(images), labels).backward()
        optimizer.step()
        step += 1
    manager.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                  "epoch": epoch + 1, "step": step}, step)
    print(f"epoch {epoch + 1} done", flush=True)
torch.save({"iteration": step, "model": model.state_dict()}, result_path)
