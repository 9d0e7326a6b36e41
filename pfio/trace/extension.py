"""The tracer's C extension, :mod:`pfio.trace._native`, picked here once at import.

Where it was built (``pip install`` compiles it; it is optional, so a machine without a
compiler installs pfio all the same), the tracer folds durations into histograms in C and
traces local files opened ``"rb"`` with the readers of :mod:`pfio.trace.native`; elsewhere
it runs its pure-Python path, which records exactly the same counts, histograms and spans.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

log = logging.getLogger(__name__)


def _load() -> Any:
    try:
        module = importlib.import_module("._native", __package__)
    except ImportError as e:
        log.debug("pfio.trace runs its pure-Python path (no C extension: %s)", e)
        return None
    log.debug("pfio.trace runs its C extension %s", module.__file__)
    return module


#: :mod:`pfio.trace._native`, or None where it was not built. Read where it is used (the
#: tracer's wrappers read it when tracing is enabled): a test sets it to None to run the
#: pure-Python path.
EXTENSION: Any = _load()
