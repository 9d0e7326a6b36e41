"""``PFIO_TRACE=<file>``: trace a whole run, every process writing its own part at exit.

``import pfio`` calls :func:`start_from_env` when the variable is set. Each process that
traced something writes ``<file>.<pid>.json`` when it ends:

* the main process and processes started by spawn or forkserver import pfio themselves (the
  variable is inherited) and write their part at exit, or when multiprocessing finishes the
  process;
* a forked child (a DataLoader worker under fork) starts counting from zero and writes its
  part when multiprocessing finishes it (such children leave through ``os._exit``, which
  skips ``atexit``).

``PFIO_TRACE_DETAIL`` is ``metrics`` (the default) or ``spans``; ``PFIO_TRACE_TORCH=1`` marks
calls for ``torch.profiler``.
"""

from __future__ import annotations

import atexit
import logging
import os

from . import chrome, control

logger = logging.getLogger(__name__)

_target: str | None = None
_written: set[int] = set()


def part_path(target: str, pid: int) -> str:
    """The part that process ``pid`` writes for ``PFIO_TRACE=target``."""
    return f"{target}.{pid}.json"


def start_from_env() -> None:
    """Start tracing if ``PFIO_TRACE`` names a file (nothing happens otherwise)."""
    global _target
    target = os.environ.get("PFIO_TRACE")
    if not target or _target is not None:
        return
    _target = os.path.abspath(target)
    detail = os.environ.get("PFIO_TRACE_DETAIL", "metrics").strip().lower()
    if detail not in control.DETAILS:
        logger.warning("PFIO_TRACE_DETAIL=%r is not one of %s; using 'metrics'", detail,
                       control.DETAILS)
        detail = "metrics"
    torch_profiler = os.environ.get("PFIO_TRACE_TORCH", "").strip() not in ("", "0")
    control.enable(detail, torch_profiler)
    from multiprocessing import util

    atexit.register(write_part)  # inherited by plain forked children too
    util.Finalize(None, write_part, exitpriority=100)
    # multiprocessing clears finalizers in a child it forks, then runs these
    util.register_after_fork(_ANCHOR, _arm_child)


class _Anchor:
    """What ``multiprocessing.util.register_after_fork`` keeps a weak reference to."""


_ANCHOR = _Anchor()


def _arm_child(_: object) -> None:
    from multiprocessing import util

    util.Finalize(None, write_part, exitpriority=100)


def write_part() -> str | None:
    """Write this process's part now (once); return its path, or None when there is
    nothing to write."""
    rec = control.recorder()
    pid = os.getpid()
    if _target is None or rec is None or rec.pid != pid or pid in _written:
        return None
    _written.add(pid)
    doc = chrome.document(rec)
    if not doc["pfio"]["metrics"]["operations"] and len(doc["traceEvents"]) <= 1 \
            and not doc["pfio"]["metrics"]["requests"] and not doc["pfio"]["metrics"]["caches"]:
        return None
    path = part_path(_target, pid)
    try:
        chrome.write(path, doc)
    except OSError as e:
        logger.warning("could not write the trace part %s: %s", path, e)
        return None
    return path
