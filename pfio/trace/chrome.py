"""Trace documents: Chrome trace event JSON that also carries pfio's metrics.

A document is a JSON object in the Chrome trace event format (``traceEvents``: complete
``"X"`` events plus process and thread name metadata), which Perfetto and chrome://tracing
load, with one more key, ``"pfio"``, holding the metrics of the processes it covers. A part
written by one process and the merge of many parts have the same form, so
``pfio trace summary`` reads either.

Timestamps are microseconds on the wall clock, so parts written by different processes line
up. Every string in a span's arguments is redacted (see :mod:`pfio.trace.redact`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from .recorder import Recorder, span_args
from .redact import redact, redact_args
from .stats import Metrics

FORMAT_VERSION = 1


def process_name(pid: int) -> str:
    """A name for this process's track: ``DataLoader worker N`` in a torch DataLoader worker,
    else the multiprocessing name (``MainProcess``, ``ForkProcess-2``, ...)."""
    data = sys.modules.get("torch.utils.data")
    info = getattr(data, "get_worker_info", lambda: None)() if data is not None else None
    if info is not None:
        return f"DataLoader worker {info.id} (pid {pid})"
    import multiprocessing

    return f"{multiprocessing.current_process().name} (pid {pid})"


def events(rec: Recorder) -> list[dict[str, Any]]:
    """The Chrome trace events of ``rec``: metadata, then each thread's spans by start."""
    pid = rec.pid
    out: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
         "args": {"name": process_name(pid)}},
    ]
    for st in rec.threads():
        spans = sorted(st.spans, key=itemgetter(2))
        if not spans:
            continue
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": st.tid,
                    "args": {"name": st.name}})
        for span in spans:
            category, name, start, duration = span[:4]
            out.append({"ph": "X", "name": name, "cat": category, "ts": rec.wall_us(start),
                        "dur": duration / 1000, "pid": pid, "tid": st.tid,
                        "args": redact_args(span_args(span))})
    return out


def document(rec: Recorder) -> dict[str, Any]:
    """The trace document of one process."""
    return {
        "traceEvents": events(rec),
        "displayTimeUnit": "ms",
        "pfio": {"version": FORMAT_VERSION, "detail": "spans" if rec.spans else "metrics",
                 "dropped_spans": rec.dropped, "metrics": rec.metrics().to_dict()},
    }


def write(path: str, doc: dict[str, Any]) -> None:
    """Write ``doc`` to the local file ``path`` (complete or not at all)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
    os.replace(tmp, path)


def load(path: str) -> dict[str, Any]:
    """Read a trace document (a part or a merge).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: it is not a pfio trace document.
    """
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{redact(path)}: not JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("pfio"), dict) \
            or not isinstance(doc.get("traceEvents"), list):
        raise ValueError(f"{redact(path)}: not a pfio trace (no 'pfio' metrics)")
    return doc


def metrics_of(doc: dict[str, Any]) -> Metrics:
    """The metrics a document carries."""
    return Metrics.from_dict(doc["pfio"]["metrics"])


def merge(docs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One document covering every process of ``docs``: all their events, metrics added."""
    trace_events: list[dict[str, Any]] = []
    total = Metrics()
    dropped = 0
    detail = "metrics"
    for doc in docs:
        trace_events.extend(doc["traceEvents"])
        total.merge(metrics_of(doc))
        dropped += int(doc["pfio"].get("dropped_spans", 0))
        if doc["pfio"].get("detail") == "spans":
            detail = "spans"
    return {"traceEvents": trace_events, "displayTimeUnit": "ms",
            "pfio": {"version": FORMAT_VERSION, "detail": detail, "dropped_spans": dropped,
                     "metrics": total.to_dict()}}
