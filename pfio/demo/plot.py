"""The demo's PNG: throughput and IO time per epoch."""

from __future__ import annotations

from collections.abc import Sequence


def plot_epochs(images_per_second: Sequence[float], io_seconds: Sequence[float],
                path: str) -> None:
    """Draw images/s and IO seconds per epoch side by side into ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = list(range(1, len(images_per_second) + 1))
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.bar(epochs, images_per_second, color="#3b7dd8")
    left.set(title="Throughput", xlabel="epoch", ylabel="images/s", xticks=epochs)
    right.bar(epochs, io_seconds, color="#d8843b")
    right.set(title="Time in IO (all workers)", xlabel="epoch", ylabel="seconds", xticks=epochs)
    figure.suptitle("pfio demo: epoch 1 reads S3, later epochs the cache")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
