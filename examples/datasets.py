"""PyTorch: PfioImageDataset over a zip on any filesystem, and atomic checkpoints."""

import cv2
import numpy as np
import torch

import pfio
from pfio.integrations.torch import CheckpointManager, PfioImageDataset

with pfio.from_url("mem://datasets").open_zip("train.zip", "w") as archive:
    for label, name in enumerate(["cat", "dog"]):
        for i in range(4):
            ok, png = cv2.imencode(".png", np.full((8, 8, 3), 60 * label, np.uint8))
            with archive.open(f"{name}/{i}.png", "wb") as f:
                f.write(png.tobytes())

dataset = PfioImageDataset("mem://datasets/train.zip",
                           transform=lambda im: torch.from_numpy(im).permute(2, 0, 1))
print(dataset.classes, len(dataset))  # ['cat', 'dog'] 8
loader = torch.utils.data.DataLoader(dataset, batch_size=4, num_workers=2)
print([tuple(images.shape) for images, _ in loader])  # [(4, 3, 8, 8), (4, 3, 8, 8)]

checkpoints = CheckpointManager("mem://datasets/checkpoints", keep_last=2)
for step in (100, 200, 300):
    checkpoints.save({"step": step}, step)  # appears whole or not at all
print(checkpoints.steps(), checkpoints.load_latest())  # [200, 300] {'step': 300}
