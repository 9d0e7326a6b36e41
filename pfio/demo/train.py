"""The demo's training loop: DataLoader over PfioImageDataset, checkpoints, crash and resume.

Every checkpoint holds the model, the optimizer, where training is (epoch, batch, step) and,
when the loader can keep one, the loader's own state (see :mod:`pfio.demo.loader`), so that a
run resumed from it trains on exactly the batches of the epoch the checkpoint had not.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from ..integrations.torch import CheckpointManager, PfioImageDataset
from ..patches import patch_all, unpatch_all
from .loader import epoch_order, loader_state, make_loader
from .model import SmallCNN, to_tensor
from .options import EpochStats, Options, SimulatedCrash
from .progress import EpochProgress
from .tracing import EpochTraces, cache_hit_ratio, io_seconds, s3_requests

logger = logging.getLogger(__name__)


@dataclass
class Progress:
    """Where training is: the next batch of which epoch, and the global step."""

    epoch: int = 0
    batch: int = 0
    step: int = 0


@dataclass
class Run:
    """What training goes on from: a fresh start or the latest checkpoint."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    progress: Progress = field(default_factory=Progress)
    #: the loader's state in the checkpoint (None: start the epoch, or a plain DataLoader)
    loader_state: dict[str, Any] | None = None


def train(base: str, dataset_url: str, options: Options) -> list[EpochStats]:
    """Train for ``options.epochs`` epochs, crash once (in the middle of the second epoch, or
    of the only one) and resume from the latest checkpoint. Returns per-epoch figures."""
    traces = EpochTraces(os.path.join(options.out, "trace-parts"))
    patch_all()
    try:
        dataset = PfioImageDataset(dataset_url, transform=to_tensor, cache="raw",
                                   cache_dir=os.path.join(options.out, "cache"))
        logger.info("dataset: %d images, classes %s", len(dataset), ", ".join(dataset.classes))
        checkpoints = CheckpointManager(f"{base}/checkpoints", keep_last=2)
        batches = -(-len(dataset) // options.batch_size)
        crash = (min(1, options.epochs - 1), batches // 2) if options.interrupt else None
        stats: list[EpochStats] = []
        while True:
            run = _restore(checkpoints)
            try:
                while run.progress.epoch < options.epochs:
                    stats.append(_epoch(run, dataset, options, traces, checkpoints, crash))
                    run.loader_state = None
                break
            except SimulatedCrash as error:
                logger.warning("!! %s; resuming from the checkpoint of step %s", error,
                               checkpoints.latest_step())
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


def _restore(checkpoints: CheckpointManager) -> Run:
    torch.manual_seed(0)
    model = SmallCNN()
    run = Run(model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
    state = checkpoints.load_latest(weights_only=False)
    if state is None:
        return run
    model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.progress = Progress(**state["progress"])
    run.loader_state = state.get("loader")
    logger.info("resumed at step %d (epoch %d, batch %d)%s", run.progress.step,
                run.progress.epoch + 1, run.progress.batch,
                ", the loader from its saved state" if run.loader_state is not None else "")
    return run


def _save(checkpoints: CheckpointManager, run: Run, loader: Any | None) -> None:
    checkpoints.save({"model": run.model.state_dict(), "optimizer": run.optimizer.state_dict(),
                      "progress": vars(run.progress).copy(),
                      "loader": None if loader is None else loader_state(loader)},
                     run.progress.step, blocking=False)


def _epoch(run: Run, dataset: PfioImageDataset, options: Options, traces: EpochTraces,
           checkpoints: CheckpointManager, crash: tuple[int, int] | None) -> EpochStats:
    """Train from ``run.progress`` to the end of its epoch (a resumed epoch goes on from its
    checkpoint: the batches before it are not trained on again)."""
    progress = run.progress
    first = progress.batch
    loader = make_loader(dataset, epoch_order(len(dataset), options.seed, progress.epoch),
                         options.batch_size, options.workers, run.loader_state, first)
    meter = EpochProgress(progress.epoch + 1, options.epochs,
                          -(-len(dataset) // options.batch_size), first, options.progress_every)
    loss_fn = torch.nn.CrossEntropyLoss()
    batches = iter(loader)
    try:
        while True:
            asked = time.perf_counter()
            try:
                images, labels = next(batches)
            except StopIteration:
                break
            meter.waited(time.perf_counter() - asked)
            if crash == (progress.epoch, progress.batch):
                raise SimulatedCrash(f"simulated crash in epoch {progress.epoch + 1} at batch "
                                     f"{progress.batch}")
            run.optimizer.zero_grad()
            logits = run.model(images)
            loss = loss_fn(logits, labels)
            loss.backward()
            run.optimizer.step()
            progress.batch += 1
            progress.step += 1
            if options.checkpoint_every and progress.step % options.checkpoint_every == 0:
                _save(checkpoints, run, loader)
            meter.trained(len(labels), int((logits.argmax(1) == labels).sum()), loss.item())
        seconds = meter.seconds
    finally:
        del batches, loader  # the workers end and write their trace parts
    epoch = progress.epoch + 1
    progress.epoch, progress.batch = epoch, 0
    _save(checkpoints, run, None)
    metrics = traces.epoch()
    logger.info("epoch %d/%d: %s images in %.1f s, %s images/s, %.1f s waiting for data, "
                "accuracy %.2f", epoch, options.epochs, f"{meter.images:,}", seconds,
                f"{meter.images / seconds if seconds else 0:,.0f}", meter.data_wait,
                meter.accuracy)
    return EpochStats(epoch, meter.images, seconds, meter.data_wait, io_seconds(metrics),
                      s3_requests(metrics), cache_hit_ratio(metrics),
                      first * options.batch_size if first else None, metrics.summary())
