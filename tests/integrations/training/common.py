"""What the PyTorch training scripts share: the model, the transform and the batch order."""

import torch

from pfio.integrations.torch import PfioImageDataset


def to_tensor(image):
    return torch.from_numpy(image).permute(2, 0, 1).float().div(255)


def make_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 14 * 14, 3))
    return model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def batches(dataset: PfioImageDataset, epoch: int, workers: int = 2):
    """The batches of ``epoch``: a shuffled order fixed by the epoch, read by 2 workers."""
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(epoch))
    return torch.utils.data.DataLoader(dataset, batch_size=8, sampler=order.tolist(),
                                       num_workers=workers)
