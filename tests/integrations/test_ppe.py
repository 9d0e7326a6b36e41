import pytest
import torch

import pfio
from pfio.integrations.torch.ppe import snapshot_writer

ppe = pytest.importorskip("pytorch_pfn_extras")


def _manager(model, optimizer, writer, epochs):
    manager = ppe.training.ExtensionsManager(
        model, optimizer, epochs, iters_per_epoch=3, out_dir="unused")
    manager.extend(ppe.training.extensions.snapshot(writer=writer, autoload=True, n_retains=2),
                   trigger=(1, "epoch"))
    return manager


def _train(manager, model, optimizer):
    while not manager.stop_trigger:
        with manager.run_iteration():
            optimizer.zero_grad()
            loss = model(torch.ones(2, 4)).sum()
            loss.backward()
            optimizer.step()


def test_snapshot_and_autoload_through_a_pfio_url(request):
    url = f"mem://ppe-{request.node.name}/snapshots"
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    manager = _manager(model, optimizer, snapshot_writer(url), epochs=3)
    _train(manager, model, optimizer)
    names = sorted(n for n in pfio.from_url(url).list() if n.startswith("snapshot"))
    assert names == ["snapshot_iter_6", "snapshot_iter_9"]

    fresh = torch.nn.Linear(4, 1)
    fresh_optimizer = torch.optim.SGD(fresh.parameters(), lr=0.1)
    resumed = _manager(fresh, fresh_optimizer, snapshot_writer(url), epochs=3)
    with resumed.run_iteration():
        pass  # autoload happens when the first iteration starts
    assert resumed.iteration == 10
    assert torch.equal(fresh.weight, model.weight)
