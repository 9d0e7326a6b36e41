"""The demo's PNG: how long training waited for data, per epoch."""

from __future__ import annotations

from collections.abc import Sequence

from .options import EpochStats


def plot_data_wait(stats: Sequence[EpochStats], path: str) -> None:
    """Draw the seconds the training loop waited for its batches in each epoch into
    ``path`` (PNG); an epoch resumed from a checkpoint is hatched and labelled with the
    images it still had to train on."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [s.epoch for s in stats]
    waits = [s.data_wait_seconds for s in stats]
    figure, axes = plt.subplots(figsize=(6, 3.8))
    bars = axes.bar(epochs, waits, color="#3b7dd8")
    top = max(waits, default=0.0) or 1.0
    for bar, s in zip(bars, stats, strict=True):
        axes.annotate(f"{s.data_wait_seconds:.2f} s", (bar.get_x() + bar.get_width() / 2,
                      bar.get_height()), ha="center", va="bottom", fontsize=9)
        if s.resumed_after is not None:
            bar.set_hatch("//")
            bar.set_facecolor("#9cbde8")
            axes.annotate(f"resumed after a crash:\n{s.images:,} images left",
                          (bar.get_x() + bar.get_width() / 2, bar.get_height() + top * 0.12),
                          ha="center", va="bottom", fontsize=8)
    axes.set_ylim(0, top * 1.45)
    axes.set(title="Time the training loop waited for data", xlabel="epoch",
             ylabel="seconds in next(loader)", xticks=epochs)
    figure.suptitle("pfio demo: epoch 1 reads the zip on S3, later epochs the local cache",
                    fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
