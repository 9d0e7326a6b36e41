"""The demo's training loop: DataLoader over PfioImageDataset, checkpoints, crash and resume."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import torch
from tqdm import tqdm

from ..integrations.torch import CheckpointManager, PfioImageDataset
from ..patches import patch_all, unpatch_all
from .model import SmallCNN, to_tensor
from .options import EpochStats, Options, SimulatedCrash
from .tracing import EpochTraces, cache_hit_ratio, io_seconds, s3_requests


@dataclass
class Progress:
    """Where training is: the next batch of which epoch, and the global step."""

    epoch: int = 0
    batch: int = 0
    step: int = 0


def train(base: str, dataset_url: str, options: Options) -> list[EpochStats]:
    """Train for ``options.epochs`` epochs, crash once (in the middle of the second epoch, or
    of the only one) and resume from the latest checkpoint. Returns per-epoch figures."""
    traces = EpochTraces(os.path.join(options.out, "trace-parts"))
    patch_all()
    try:
        dataset = PfioImageDataset(dataset_url, transform=to_tensor, cache="raw",
                                   cache_dir=os.path.join(options.out, "cache"))
        print(f"dataset: {len(dataset)} images, classes {', '.join(dataset.classes)}")
        checkpoints = CheckpointManager(f"{base}/checkpoints", keep_last=2)
        batches = -(-len(dataset) // options.batch_size)
        crash = (min(1, options.epochs - 1), batches // 2) if options.interrupt else None
        stats: list[EpochStats] = []
        while True:
            model, optimizer, progress = _restore(checkpoints)
            try:
                while progress.epoch < options.epochs:
                    stats.append(_epoch(model, optimizer, dataset, progress, options, traces,
                                        checkpoints, crash))
                break
            except SimulatedCrash as error:
                print(f"\n!! {error}; resuming from the checkpoint of step "
                      f"{checkpoints.latest_step()}")
                traces.epoch()  # drop the interrupted part's counts
                crash = None
        checkpoints.wait()
        with open(f"{base}/metrics.json", "w") as f:  # builtins.open on S3: patch_all at work
            f.write(str([round(s.images_per_second) for s in stats]))
        traces.export(os.path.join(options.out, "trace.json"))
        return stats
    finally:
        unpatch_all()
        traces.close()


def _restore(checkpoints: CheckpointManager) -> tuple[Any, Any, Progress]:
    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    state = checkpoints.load_latest(weights_only=False)
    if state is None:
        return model, optimizer, Progress()
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    progress = Progress(**state["progress"])
    print(f"resumed at step {progress.step} (epoch {progress.epoch + 1}, batch {progress.batch})")
    return model, optimizer, progress


def _save(checkpoints: CheckpointManager, model: Any, optimizer: Any, progress: Progress) -> None:
    checkpoints.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                      "progress": vars(progress).copy()}, progress.step, blocking=False)


def _epoch(model: torch.nn.Module, optimizer: Any, dataset: PfioImageDataset,
           progress: Progress, options: Options, traces: EpochTraces,
           checkpoints: CheckpointManager, crash: tuple[int, int] | None) -> EpochStats:
    """Train from ``progress`` to the end of its epoch (a resumed epoch skips what was done)."""
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(
        options.seed * 1000 + progress.epoch)).tolist()
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=options.batch_size, num_workers=options.workers,
        sampler=order[progress.batch * options.batch_size:])
    loss_fn = torch.nn.CrossEntropyLoss()
    seen = correct = 0
    started = time.perf_counter()
    bar = tqdm(loader, desc=f"epoch {progress.epoch + 1}/{options.epochs}", unit="batch",
               file=sys.stderr, disable=not sys.stderr.isatty())
    for images, labels in bar:
        if crash == (progress.epoch, progress.batch):
            bar.close()
            raise SimulatedCrash(f"simulated crash in epoch {progress.epoch + 1} at batch "
                                 f"{progress.batch}")
        optimizer.zero_grad()
        logits = model(images)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()
        seen += len(labels)
        correct += int((logits.argmax(1) == labels).sum())
        progress.batch += 1
        progress.step += 1
        if options.checkpoint_every and progress.step % options.checkpoint_every == 0:
            _save(checkpoints, model, optimizer, progress)
        bar.set_postfix(loss=f"{loss.item():.3f}", acc=f"{correct / seen:.2f}")
    seconds = time.perf_counter() - started
    epoch = progress.epoch + 1
    progress.epoch, progress.batch = epoch, 0
    _save(checkpoints, model, optimizer, progress)
    del loader, bar  # the workers end and write their trace parts
    metrics = traces.epoch()
    print(f"epoch {epoch}: {seen / seconds:,.0f} images/s, accuracy {correct / max(seen, 1):.2f}")
    return EpochStats(epoch, seen, seconds, io_seconds(metrics), s3_requests(metrics),
                      cache_hit_ratio(metrics), metrics.summary())
