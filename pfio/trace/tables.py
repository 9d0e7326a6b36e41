"""Rendering :class:`~pfio.trace.stats.Metrics` as readable tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .stats import Metrics, OpStats


def human_bytes(n: float) -> str:
    """``1536`` -> ``1.5 KiB``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def human_seconds(s: float) -> str:
    """``0.0000123`` -> ``12.3us``."""
    if s == 0:
        return "0"
    if s < 1e-3:
        return f"{s * 1e6:.1f}us"
    if s < 1:
        return f"{s * 1e3:.1f}ms"
    return f"{s:.2f}s"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns aligned: text to the left, the rest to the right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            out.append(str(cell).ljust(widths[i]) if i < 2 else str(cell).rjust(widths[i]))
        return "  ".join(out).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def _op_row(first: str, second: str, s: OpStats) -> list[str]:
    return [first, second, str(s.count), human_bytes(s.nbytes), human_seconds(s.seconds),
            human_seconds(s.p50), human_seconds(s.p90), human_seconds(s.p99), str(s.errors),
            str(s.retries)]


_TIMES = ["count", "bytes", "total", "p50", "p90", "p99", "errors", "retries"]


def render(m: Metrics) -> str:
    """The operations, backend requests and caches of ``m`` as text tables."""
    n = len(m.processes)
    parts = [f"pfio trace: {n} process{'es' if n != 1 else ''}"]
    if m.operations:
        rows = [_op_row(s, o, v) for (s, o), v in sorted(m.operations.items())]
        parts.append("operations\n" + table(["scheme", "operation", *_TIMES], rows))
    if m.requests:
        rows = []
        for (s, method), v in sorted(m.requests.items()):
            statuses = " ".join(f"{k}:{c}" for k, c in sorted(v.statuses.items()))
            rows.append([*_op_row(s, method, v), statuses])
        parts.append("backend requests\n"
                     + table(["scheme", "method", *_TIMES, "statuses"], rows))
    if m.caches:
        rows = [[name, f"{100 * c.hit_ratio:.1f}%", str(c.hits), str(c.misses),
                 human_bytes(c.hit_bytes), human_bytes(c.miss_bytes), human_seconds(c.ns / 1e9)]
                for name, c in sorted(m.caches.items())]
        parts.append("caches\n" + table(
            ["cache", "hit ratio", "hits", "misses", "hit bytes", "miss bytes", "total"], rows))
    if len(parts) == 1:
        parts.append("nothing recorded")
    return "\n\n".join(parts)
