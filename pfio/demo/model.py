"""The small CNN the demo trains."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class SmallCNN(nn.Module):
    """Two convolution blocks and a linear classifier for 32x32 RGB images."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(32 * 8 * 8, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.classifier(self.features(x).flatten(1))
        return logits


def to_tensor(image: np.ndarray) -> torch.Tensor:
    """HWC uint8 RGB -> CHW float in [0, 1] (the dataset's transform)."""
    return torch.from_numpy(image).permute(2, 0, 1).float().div_(255)
