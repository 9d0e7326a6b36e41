"""Run every benchmark in this folder and print one table (``make bench``).

Results are also written to ``benchmarks/results/latest.json`` and ``latest.md``.
Usage: ``python benchmarks/run.py [--quick] [name ...]`` (names as in ``bench_NAME.py``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time

from harness import HERE, Row, format_table


def main() -> int:
    quick = "--quick" in sys.argv
    wanted = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows: list[Row] = []
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem[len("bench_"):]
        if wanted and name not in wanted:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module  # (dataclasses look their module up there)
        spec.loader.exec_module(module)
        start = time.perf_counter()
        print(f"== {name}", flush=True)
        found = module.run(quick)
        print(format_table(found), f"\n({time.perf_counter() - start:.0f} s)\n", flush=True)
        rows.extend(found)
    table = format_table(rows)
    print("== all benchmarks\n" + table)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "latest.md").write_text(table + "\n")
    (results / "latest.json").write_text(json.dumps([r.as_dict() for r in rows], indent=2))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
