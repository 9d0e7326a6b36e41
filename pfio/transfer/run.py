"""Carrying out a :class:`~pfio.transfer.plan.Plan`: files copied by a thread pool
(server-side where the destination can, else streamed), directories made, deletions,
progress, and the outcome as a :class:`SyncResult` or a :class:`TransferError`.

A file that fails does not stop the others: every failure is collected, and once the rest
are done they are raised together as one :class:`TransferError` (an ``OSError``; Python
3.10 has no ``ExceptionGroup``) that carries the result and each failure.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from ..fs.base import COPY_CHUNK, FS, stream_copy
from ..fs.local import Local
from ..fs.stat import FileStat
from ..trace.redact import redact
from .plan import Item, Plan, digest

logger = logging.getLogger("pfio.transfer")

#: streamed files at least this large go at most :data:`LARGE_AT_ONCE` at a time, so that
#: many workers do not each hold a large file's read-ahead and upload parts at once
LARGE_FILE = 64 << 20
LARGE_AT_ONCE = 4


@dataclass
class SyncResult:
    """What :func:`pfio.copy` or :func:`pfio.sync` did (with ``dry_run``: would do).

    Attributes:
        source, destination: the URLs as given.
        copied: names (relative to the source directory, or the file's name) of the files
            copied.
        skipped: names of the files left as they were (the destination held them already).
        deleted: names of the destination's files deleted (``sync(delete=True)``).
        bytes: bytes copied (the sizes of the files copied).
        seconds: wall time of the whole transfer, listings included.
        errors: ``(name, exception)`` of each file that failed.
        dry_run: nothing was changed; the lists say what would have been.
    """

    source: str
    destination: str
    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0
    errors: list[tuple[str, Exception]] = field(default_factory=list)
    dry_run: bool = False

    def __str__(self) -> str:
        verb = "would copy" if self.dry_run else "copied"
        failed = f", {len(self.errors):,} failed" if self.errors else ""
        files = "file" if len(self.copied) == 1 else "files"
        return (f"{redact(self.source)} -> {redact(self.destination)}: {verb} "
                f"{len(self.copied):,} {files} ({_size(self.bytes)}), "
                f"{len(self.skipped):,} unchanged, {len(self.deleted):,} deleted{failed} "
                f"in {self.seconds:.2f} s")


class TransferError(OSError):
    """Some files of a copy or a sync failed; the others were transferred.

    Attributes:
        result: the :class:`SyncResult` of the whole transfer.
        errors: ``(name, exception)`` of each failure (``result.errors``); the first
            exception is also this one's ``__cause__``.
    """

    def __init__(self, result: SyncResult) -> None:
        self.result = result
        self.errors = result.errors
        total = len(result.errors) + len(result.copied) + len(result.deleted)
        name, first = result.errors[0]
        super().__init__(f"{len(result.errors):,} of {total:,} file operations failed "
                         f"({redact(result.source)} -> {redact(result.destination)}), "
                         f"e.g. {name}: {first}")

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.result,)


class Runner:
    """Carries out plans from ``source`` to ``target`` with ``workers`` threads.

    Args:
        source, target: the filesystems; plan names are relative to their roots.
        workers: threads copying (and deleting) at once.
        progress: a progress bar on standard error: True, False, or None for "when standard
            error is a terminal" (either way only when tqdm is installed).
        keep_times: give each file copied to a local destination its source's modification
            time (what :func:`pfio.sync` compares next time).
        dry_run: decide (digests included) but change nothing.
    """

    def __init__(self, source: FS, target: FS, workers: int, progress: bool | None,
                 keep_times: bool = False, dry_run: bool = False) -> None:
        self.source = source
        self.target = target
        self.workers = max(1, workers)
        self.progress = progress
        #: where a local target's files are, when they get their source's times
        self._local_root = target.cwd if keep_times and isinstance(target, Local) else None
        self.dry_run = dry_run
        self._large = threading.BoundedSemaphore(LARGE_AT_ONCE)

    def run(self, plan: Plan, result: SyncResult, label: str, compare: str = "") -> None:
        """Carry out ``plan``, filling ``result`` in (``compare`` decides ``check`` items)."""
        if not self.dry_run:
            self.target.makedirs("", exist_ok=True)  # the root itself (mem:// makes none)
            for name in plan.directories:
                self.target.makedirs(name, exist_ok=True)
        result.skipped.extend(plan.skipped)
        bar = _progress_bar(self.progress, len(plan.items) + len(plan.deletions), label)
        try:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="pfio-transfer") as pool:
                copies: dict[Future[int | None], str] = {
                    pool.submit(self._transfer, item, compare): item.name for item in plan.items}
                self._collect(pool, copies, result, bar, copied=True)
                deletions: dict[Future[int | None], str] = {
                    pool.submit(self._delete, name): name for name in plan.deletions}
                self._collect(pool, deletions, result, bar, copied=False)
        finally:
            if bar is not None:
                bar.close()

    def _collect(self, pool: ThreadPoolExecutor, futures: dict[Future[int | None], str],
                 result: SyncResult, bar: Any, copied: bool) -> None:
        """Wait for ``futures``, recording each outcome in ``result``; on an interrupt the
        files not started are dropped (those under way finish or are discarded whole)."""
        try:
            for future in as_completed(futures):
                name = futures[future]
                try:
                    moved = future.result()
                except Exception as exc:  # noqa: BLE001 - collected, raised together
                    logger.debug("%s: failed: %s", name, exc, exc_info=True)
                    result.errors.append((name, exc))
                else:
                    if not copied:
                        result.deleted.append(name)
                    elif moved is None:
                        result.skipped.append(name)
                    else:
                        result.copied.append(name)
                        result.bytes += moved
                if bar is not None:
                    bar.update(1)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise

    def _transfer(self, item: Item, compare: str) -> int | None:
        """Copy ``item`` (unless its digests match: None); the bytes copied."""
        if item.check and item.target is not None and \
                digest(self.source, item.name, item.source, compare) == \
                digest(self.target, item.destination, item.target, compare):
            return None
        if self.dry_run:
            return item.source.size
        return self.copy(item.name, item.destination, item.source)

    def copy(self, name: str, destination: str, st: FileStat) -> int:
        """Copy the file ``name`` (whose stat is ``st``) to ``destination``: on the server
        when the target filesystem can, else streamed; the bytes copied."""
        if self.target._copy_from(self.source, name, destination, st.size):
            moved = st.size
        else:
            large = st.size >= LARGE_FILE
            with self._large if large else contextlib.nullcontext():
                # a small file in one read, without an 8 MiB buffer for it
                chunk = min(COPY_CHUNK, max(st.size + 1, 1 << 16))
                moved = stream_copy(self.source, name, self.target, destination, chunk)
        if self._local_root is not None and st.last_modified is not None:
            os.utime(os.path.join(self._local_root, destination),
                     (time.time(), st.last_modified))
        logger.debug("copied %s (%d bytes)", name, moved)
        return moved

    def _delete(self, name: str) -> int:
        if not self.dry_run:
            self.target.remove(name)
            logger.debug("deleted %s", name)
        return 0


def _progress_bar(enabled: bool | None, total: int, label: str) -> Any:
    """A tqdm bar over ``total`` files on standard error, or None: off when ``enabled`` is
    False, when nothing is to be done, when tqdm is missing, and (``enabled`` None) when
    standard error is not a terminal."""
    if enabled is False or total == 0 or (enabled is None and not sys.stderr.isatty()):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        if enabled:
            logger.warning("no progress bar: tqdm is not installed")
        return None
    return tqdm(total=total, desc=label, unit="file", file=sys.stderr)


def _size(n: int) -> str:
    """``n`` bytes, readable."""
    value, unit = float(n), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{n:,} B" if unit == "B" else f"{value:,.1f} {unit}"
