"""pfio.trace: where IO time goes, counted and timed.

>>> from pfio import trace
>>> with trace.tracing():
...     ...  # read and write through pfio
>>> print(trace.summary())  # doctest: +SKIP

``metrics()`` gives, per ``(scheme, operation)``, counts, bytes, total time, p50/p90/p99
latency, errors and retries; per backend request method (S3 ``GET``, ``PUT``, ...) the same
with status codes; per cache, hits, misses and hit bytes. ``enable("spans")`` also keeps one
span per call for ``export_chrome_trace(path)`` (Perfetto, chrome://tracing).

``PFIO_TRACE=<file>`` in the environment traces a whole run: every process that imports pfio
(DataLoader workers under fork, spawn and forkserver included) writes ``<file>.<pid>.json`` at
exit; ``pfio trace summary <file>.*.json`` and ``pfio trace merge ... -o out.json`` combine
them. ``PFIO_TRACE_DETAIL=spans`` keeps spans too, ``PFIO_TRACE_TORCH=1`` shows the calls in
``torch.profiler``.

Backends, caches and patches report through :mod:`pfio.trace.hook`, which costs one global
look-up while tracing is off. This package imports its parts on first use, so that
``import pfio`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_API = {
    "enable": "control", "disable": "control", "is_enabled": "control",
    "tracing": "control", "reset": "control", "metrics": "control", "summary": "control",
    "export_chrome_trace": "control", "Metrics": "stats", "OpStats": "stats",
    "CacheStats": "stats",
}


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'pfio.trace' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = sorted(_API)
