"""Small local files (issue 2): open + read + close of 4 KiB files.

``pfio.open_url(path, "rb")`` and ``Local(dir).open(name, "rb")`` against builtin ``open``
(target: at most 1.3x its cost). Costs are CPU times (user + system) of this process, which
a busy shared machine disturbs less than wall time.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, best_cpu_of, main  # noqa: E402

import pfio  # noqa: E402
from pfio.fs.local import Local  # noqa: E402


def run(quick: bool) -> list[Row]:
    """Per-file cost of open+read+close through pfio and through builtin ``open``."""
    count = 500 if quick else 2_000
    repeat = 3 if quick else 7
    with tempfile.TemporaryDirectory(prefix="pfio-bench-local-") as workdir:
        payload = os.urandom(4096)
        names = [f"f{i:05d}.bin" for i in range(count)]
        for name in names:
            with open(os.path.join(workdir, name), "wb") as f:
                f.write(payload)
        paths = [os.path.join(workdir, name) for name in names]
        fs = Local(workdir)

        def builtin() -> None:
            for path in paths:
                with open(path, "rb") as f:
                    f.read()

        def via_open_url() -> None:
            for path in paths:
                with pfio.open_url(path, "rb") as f:
                    f.read()

        def via_local() -> None:
            for name in names:
                with fs.open(name, "rb") as f:
                    f.read()

        # interleave the three so that drifting machine load hits them alike
        times = {fn: float("inf") for fn in (builtin, via_open_url, via_local)}
        for _ in range(repeat):
            for fn in times:
                times[fn] = min(times[fn], best_cpu_of(fn, 1))
    per_file = {fn.__name__: t / count * 1e6 for fn, t in times.items()}
    metric = "open+read+close of a 4 KiB file"
    return [
        Row("local", f"{metric}: pfio.open_url", per_file["via_open_url"], "builtin open",
            per_file["builtin"], 1.3, higher_is_better=False, unit="us"),
        Row("local", f"{metric}: Local.open", per_file["via_local"], "builtin open",
            per_file["builtin"], 1.3, higher_is_better=False, unit="us"),
    ]


if __name__ == "__main__":
    main(run)
