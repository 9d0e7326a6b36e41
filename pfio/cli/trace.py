"""``pfio trace``: summarise and merge the parts that ``PFIO_TRACE`` runs write."""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from typing import Any

_DESCRIPTION = """\
Combine the trace files of a run made with PFIO_TRACE=<file> (each process writes
<file>.<pid>.json at exit) or written by pfio.trace.export_chrome_trace.

A FILE that does not exist stands for its parts: 'pfio trace summary trace.json' reads
trace.json.*.json."""

_EPILOG = """\
examples:
  PFIO_TRACE=/tmp/run.json python train.py
  pfio trace summary /tmp/run.json
  pfio trace merge /tmp/run.json -o /tmp/run-merged.json   # load it in ui.perfetto.dev"""


def add_trace_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``trace`` command to the ``pfio`` command's ``subparsers``; the parsed
    arguments carry ``handler``, the function that runs it."""
    parser = subparsers.add_parser(
        "trace", help="summarise and merge PFIO_TRACE files", description=_DESCRIPTION,
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="trace_action", metavar="ACTION", required=True)
    summary = actions.add_parser("summary", help="print the metrics of all files as tables",
                                 description="Print the metrics of FILES, added up.")
    summary.add_argument("files", nargs="+", metavar="FILE")
    summary.add_argument("--json", action="store_true", help="print the metrics as JSON")
    merge = actions.add_parser("merge", help="merge files into one Chrome trace",
                               description="Write one trace (events and metrics) of FILES.")
    merge.add_argument("files", nargs="+", metavar="FILE")
    merge.add_argument("-o", "--output", required=True, metavar="OUT",
                       help="the merged trace to write (a local file)")
    parser.set_defaults(handler=run)
    return parser


def expand(paths: list[str]) -> list[str]:
    """The files named by ``paths``: a missing ``x`` stands for its parts ``x.*.json``.

    Raises:
        FileNotFoundError: a path that is neither a file nor has parts.
    """
    files: list[str] = []
    for path in paths:
        if os.path.exists(path):
            files.append(path)
            continue
        parts = sorted(glob.glob(glob.escape(path) + ".*.json"))
        if not parts:
            raise FileNotFoundError(f"no trace file {path!r} nor parts {path}.*.json")
        files.extend(parts)
    return files


def run(args: argparse.Namespace) -> int:
    """Run ``pfio trace summary`` or ``pfio trace merge``; return the exit status."""
    from ..trace import chrome

    merged = chrome.merge(chrome.load(path) for path in expand(args.files))
    if args.trace_action == "merge":
        chrome.write(args.output, merged)
        n = len(chrome.metrics_of(merged).processes)
        sys.stderr.write(f"pfio trace: {n} process(es) -> {args.output}\n")
        return 0
    metrics = chrome.metrics_of(merged)
    if args.json:
        sys.stdout.write(json.dumps(metrics.to_dict(), indent=1) + "\n")
    else:
        sys.stdout.write(metrics.summary() + "\n")
    return 0
