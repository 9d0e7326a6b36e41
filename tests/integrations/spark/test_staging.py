"""The staged commit of write jobs (no Spark needed: the protocol on a pfio filesystem)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

import pfio  # noqa: E402
from pfio.integrations.spark.staging import STAGING, SUCCESS, StagedJob, TaskFiles  # noqa: E402


def _stage(job: StagedJob, task: int, attempt: int, body: bytes = b"x") -> TaskFiles:
    directory = job.task_directory(task, attempt)
    name = f"{job.prefix(task)}-00000.parquet"
    with pfio.from_url(job.url, create=True) as fs:
        fs.makedirs(directory, exist_ok=True)
        with fs.open(f"{directory}/{name}", "wb") as f:
            f.write(body)
    return TaskFiles(task, directory, [name], 1)


def _names(url: str) -> list[str]:
    with pfio.from_url(url) as fs:
        return sorted(n.rstrip("/") for n in fs.list())


def test_commit_publishes_the_reported_attempt_only(tmp_path):
    job = StagedJob(str(tmp_path / "ds"))
    _stage(job, 0, 0, b"failed attempt")  # a retried task's first attempt, never reported
    report = _stage(job, 0, 1, b"good")
    other = _stage(job, 1, 0)
    published = job.commit([report, other])
    assert len(published) == 2
    assert _names(job.url) == sorted(published + [SUCCESS])
    with pfio.open_url(f"{job.url}/{job.prefix(0)}-00000.parquet", "rb") as f:
        assert f.read() == b"good"


def test_commit_removes_the_staging_directory(tmp_path):
    job = StagedJob(str(tmp_path / "ds"))
    job.commit([_stage(job, 0, 0)])
    assert STAGING not in _names(job.url)


def test_commit_skips_failed_tasks_messages(tmp_path):
    job = StagedJob(str(tmp_path / "ds"))
    published = job.commit([None, _stage(job, 1, 0)])
    assert published == [f"{job.prefix(1)}-00000.parquet"]


def test_two_reports_for_one_task_are_refused(tmp_path):
    job = StagedJob(str(tmp_path / "ds"))
    with pytest.raises(ValueError, match="more than one report"):
        job.commit([_stage(job, 0, 0), _stage(job, 0, 1)])


def test_abort_leaves_the_dataset_as_it_was(tmp_path):
    first = StagedJob(str(tmp_path / "ds"))
    first.commit([_stage(first, 0, 0)])
    before = _names(first.url)
    second = StagedJob(first.url)
    _stage(second, 0, 0)
    second.abort()
    assert _names(first.url) == before


def test_append_keeps_earlier_jobs_files(tmp_path):
    first = StagedJob(str(tmp_path / "ds"))
    old = first.commit([_stage(first, 0, 0)])
    second = StagedJob(first.url)
    new = second.commit([_stage(second, 0, 0)])
    assert set(old) | set(new) <= set(_names(first.url)) and old != new


def test_overwrite_replaces_earlier_files_and_partition_directories(tmp_path):
    first = StagedJob(str(tmp_path / "ds"))
    first.commit([_stage(first, 0, 0)])
    with pfio.from_url(first.url) as fs:
        fs.makedirs("part=a")
        with fs.open("part=a/old.parquet", "wb") as f:
            f.write(b"old")
    second = StagedJob(first.url, overwrite=True)
    new = second.commit([_stage(second, 0, 0)])
    assert _names(first.url) == sorted(new + [SUCCESS])


def test_commit_on_s3(s3_env, s3_bucket):
    job = StagedJob(f"s3://{s3_bucket}/ds")
    _stage(job, 0, 0, b"lost")
    published = job.commit([_stage(job, 0, 1)])
    assert _names(job.url) == sorted(published + [SUCCESS])
