"""The staged commit of a write job: tasks write aside, the job's commit publishes.

Each task attempt writes its files under ``<url>/_pfio_staging/<job>/<task>-<attempt>/``
(hidden from readers: they skip ``_`` names) and reports their names; the job's commit
moves the files of the reported attempts, one per task, to ``<url>/`` under names that hold
the job id (so appends never collide), removes the staging directory with whatever failed or
retried attempts left there, and writes ``_SUCCESS``. An aborted job removes its staging
directory. A retried task therefore never leaves a second copy of its rows.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from ...api import from_url
from ...fs.base import FS

logger = logging.getLogger(__name__)

#: the directory, under a dataset, of the files of write jobs not yet committed
STAGING = "_pfio_staging"
#: the file a committed job leaves in the dataset's directory
SUCCESS = "_SUCCESS"


@dataclass(frozen=True)
class TaskFiles:
    """What one task attempt wrote: its staging directory (relative to the dataset) and
    the names of its files there."""

    task: int
    directory: str
    names: list[str] = field(default_factory=list)
    rows: int = 0


class StagedJob:
    """One write job into the dataset at ``url``.

    Args:
        url: the dataset's directory (any pfio URL; every task must reach it).
        overwrite: the commit removes the dataset's data files that were there before.
        job_id: the job's id (default: a new random one).
    """

    def __init__(self, url: str, overwrite: bool = False, job_id: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.overwrite = overwrite
        self.job_id = job_id or uuid.uuid4().hex

    @property
    def staging(self) -> str:
        """This job's staging directory, relative to the dataset."""
        return f"{STAGING}/{self.job_id}"

    def task_directory(self, task: int, attempt: int) -> str:
        """The staging directory of a task attempt, relative to the dataset."""
        return f"{self.staging}/{task:05d}-{attempt}"

    def prefix(self, task: int) -> str:
        """The start of the names of the files of ``task``, staged and published."""
        return f"part-{self.job_id[:12]}-{task:05d}"

    def commit(self, reports: list[TaskFiles | None]) -> list[str]:
        """Publish the files of ``reports`` (one per task: those of the attempt Spark
        committed), remove what was there before when overwriting, then the staging
        directory, and write ``_SUCCESS``. Returns the names published."""
        tasks = [r.task for r in reports if r is not None]
        if len(tasks) != len(set(tasks)):
            raise ValueError(f"job {self.job_id}: more than one report for a task: {tasks}")
        with from_url(self.url) as fs:
            before = _data_files(fs) if self.overwrite else []
            published = []
            for report in reports:
                if report is None:
                    continue
                for name in report.names:
                    fs.rename(f"{report.directory}/{name}", name)
                    published.append(name)
            for name in sorted(set(before) - set(published)):
                fs.remove(name, recursive=True)
            self._remove_staging(fs)
            with fs.open(SUCCESS, "wb"):
                pass
        logger.info("%s: job %s published %d files", self.url, self.job_id, len(published))
        return published

    def abort(self) -> None:
        """Remove everything the job's tasks wrote; the dataset stays as it was."""
        with from_url(self.url) as fs:
            self._remove_staging(fs)
        logger.info("%s: job %s aborted", self.url, self.job_id)

    def _remove_staging(self, fs: FS) -> None:
        if fs.exists(self.staging):
            fs.remove(self.staging, recursive=True)
        try:
            if not list(fs.list(STAGING)):  # other jobs' staging stays
                fs.remove(STAGING, recursive=True)
        except FileNotFoundError:
            pass


def _data_files(fs: FS) -> list[str]:
    """What the dataset's directory holds for readers: its entries whose names do not
    start with ``_`` or ``.`` (files, and hive partition directories)."""
    names = [n.rstrip("/") for n in fs.list()]
    return [n for n in names if not n.startswith((".", "_"))]
