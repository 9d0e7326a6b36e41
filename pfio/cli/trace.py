"""``pfio trace``: summarise and merge the parts that ``PFIO_TRACE`` runs write."""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from typing import TYPE_CHECKING, Any

_DESCRIPTION = """\
Combine the trace files of a run made with PFIO_TRACE=<file> (each process writes
<file>.<pid>.json at exit) or written by pfio.trace.export_chrome_trace.

A FILE that does not exist stands for its parts: 'pfio trace summary trace.json' reads
trace.json.*.json. A directory stands for the traces in it (its *.json files that are pfio
traces, e.g. the trace-parts/ folder of 'pfio demo'); other JSON files there are skipped."""

_EPILOG = """\
examples:
  PFIO_TRACE=/tmp/run.json python train.py
  pfio trace summary /tmp/run.json
  pfio trace summary demo-output/trace-parts/
  pfio trace merge /tmp/run.json -o /tmp/run-merged.json   # load it in ui.perfetto.dev"""

if TYPE_CHECKING:
    from .common import Subparsers


def add_trace_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
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
    """The files named by ``paths``: a missing ``x`` stands for its parts ``x.*.json``, a
    directory for its ``*.json`` files.

    Raises:
        FileNotFoundError: a path that is neither a file nor has parts, or a directory
            without ``*.json`` files.
    """
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(glob.glob(os.path.join(glob.escape(path), "*.json")))
            if not found:
                raise FileNotFoundError(f"no trace files (*.json) in the directory {path!r}")
            files.extend(found)
        elif os.path.exists(path):
            files.append(path)
        else:
            parts = sorted(glob.glob(glob.escape(path) + ".*.json"))
            if not parts:
                raise FileNotFoundError(f"no trace file {path!r} nor parts {path}.*.json")
            files.extend(parts)
    return files


def load_all(paths: list[str]) -> list[dict[str, Any]]:
    """The trace documents :func:`expand` finds for ``paths``. In a directory, a file that
    is not a pfio trace, or that covers processes an earlier file of the directory covered
    (a merge written beside its parts), is skipped with a note on standard error; a file
    named itself, or as a part, must be a trace and is always counted.

    Raises:
        FileNotFoundError: as :func:`expand`, or a directory holding no pfio trace.
        ValueError: a named file or part is not a pfio trace.
    """
    from ..trace import chrome

    documents: list[dict[str, Any]] = []
    for path in paths:
        if not os.path.isdir(path):
            documents.extend(chrome.load(file) for file in expand([path]))
            continue
        seen: set[int] = set()
        before = len(documents)
        for file in expand([path]):
            try:
                doc = chrome.load(file)
            except ValueError as e:
                sys.stderr.write(f"pfio trace: skipping {e}\n")
                continue
            processes = set(doc["pfio"]["metrics"].get("processes") or ())
            if processes & seen:
                sys.stderr.write(f"pfio trace: skipping {file}: its processes are counted "
                                 "already (a merge of the other files?)\n")
                continue
            seen |= processes
            documents.append(doc)
        if len(documents) == before:
            raise FileNotFoundError(f"no pfio trace in the directory {path!r}")
    return documents


def run(args: argparse.Namespace) -> int:
    """Run ``pfio trace summary`` or ``pfio trace merge``; return the exit status."""
    from ..trace import chrome

    merged = chrome.merge(load_all(args.files))
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
