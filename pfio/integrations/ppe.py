"""pytorch-pfn-extras (PPE): snapshots written to and resumed from any pfio URL.

    import pytorch_pfn_extras as ppe
    from pfio.integrations.ppe import snapshot_writer

    writer = snapshot_writer("s3://bucket/run1/snapshots")
    manager.extend(ppe.training.extensions.snapshot(writer=writer, autoload=True, n_retains=3),
                   trigger=(1, "epoch"))

PPE writers take a filesystem object with the PFIO API; a pfio filesystem is one. Writes are
atomic (a snapshot appears whole or not at all), and ``autoload`` finds the latest snapshot by
listing the same filesystem.
"""

from __future__ import annotations

from typing import Any

from ..api import from_url


def snapshot_writer(url: str, **kwargs: Any) -> Any:
    """A PPE ``SimpleWriter`` that writes snapshots under ``url`` (kwargs go to the writer)."""
    from pytorch_pfn_extras.writing import SimpleWriter

    return SimpleWriter(fs=from_url(url, create=True), out_dir="", **kwargs)
