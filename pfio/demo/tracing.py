"""The demo's view of the tracer: every process writes its part, each epoch reads the new ones."""

from __future__ import annotations

import glob
import os
import shutil
from typing import Any

from .. import trace
from ..trace import chrome, env
from ..trace.stats import Metrics


class EpochTraces:
    """Traces a whole run (``PFIO_TRACE``), then cuts it into epochs.

    DataLoader workers are new processes each epoch; each writes its part when it ends, so
    the parts that appeared since the previous epoch are that epoch's workers. The main
    process's own counts are taken with :func:`pfio.trace.metrics` and reset each epoch.
    ``directory`` is emptied first: the parts of an earlier run are never merged into this
    run's trace.
    """

    def __init__(self, directory: str) -> None:
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        self.target = os.path.join(directory, "part")
        os.environ["PFIO_TRACE"] = self.target
        os.environ["PFIO_TRACE_DETAIL"] = "spans"
        env.start_from_env()
        self._seen: set[str] = set()
        self.documents: list[dict[str, Any]] = []

    def epoch(self) -> Metrics:
        """The metrics of every process since the previous call."""
        metrics = Metrics()
        for path in sorted(set(glob.glob(glob.escape(self.target) + ".*.json")) - self._seen):
            self._seen.add(path)
            document = chrome.load(path)
            self.documents.append(document)
            metrics.merge(chrome.metrics_of(document))
        metrics.merge(trace.metrics())
        trace.reset()
        return metrics

    def export(self, path: str) -> None:
        """One Chrome trace of the main process and every worker part so far."""
        own = os.path.join(os.path.dirname(self.target), "main.json")
        trace.export_chrome_trace(own)
        chrome.write(path, chrome.merge([*self.documents, chrome.load(own)]))

    def close(self) -> None:
        trace.disable()
        os.environ.pop("PFIO_TRACE", None)
        os.environ.pop("PFIO_TRACE_DETAIL", None)


def io_seconds(metrics: Metrics) -> float:
    """Seconds spent in pfio reads and opens, summed over processes and threads (the
    DataLoader workers read in several threads each, so this can exceed the epoch)."""
    return sum(s.seconds for (_, op), s in metrics.operations.items() if op in ("open", "read"))


def s3_requests(metrics: Metrics) -> int:
    """Requests sent to S3."""
    return sum(s.count for (scheme, _), s in metrics.requests.items() if scheme == "s3")


def cache_hit_ratio(metrics: Metrics) -> float:
    """Hits over lookups, over every cache."""
    hits = sum(c.hits for c in metrics.caches.values())
    lookups = hits + sum(c.misses for c in metrics.caches.values())
    return hits / lookups if lookups else 0.0
