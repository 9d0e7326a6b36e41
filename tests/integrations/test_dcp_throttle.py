"""DCP saves through S3 throttling (503 SlowDown from the fault proxy in front of moto): the
endpoint pauses instead of each part spending the retry budget; a save that fails raises
the S3 error; no multipart upload is left behind."""

import os
import time

import boto3
import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException

from pfio.fs.s3.retry import RetryPolicy
from pfio.integrations.torch.dcp import PfioReader, PfioWriter


def _state():
    return {f"w{i}": torch.full((3 << 20,), float(i)) for i in range(4)}  # 4 x 12 MiB


def _options(proxy, **retry):
    # the budget scaled down with the time: 10 retries' worth (the default is 100 retries
    # for tens of seconds of SlowDown), backoff from 0.1 s rather than 1 s
    policy = RetryPolicy(throttle_scale=2.0, quota=50, **retry)
    return {"endpoint": proxy.endpoint, "retry": policy, "mpu_chunksize": 5 << 20,
            "mpu_concurrency": 4}


def _for_seconds(seconds):
    """A ``match`` of the fault proxy: every upload request (PUT, POST) from the first
    one on, for ``seconds``."""
    end = []

    def match(request):
        if request.method not in ("PUT", "POST"):
            return False
        if not end:
            end.append(time.monotonic() + seconds)
        return time.monotonic() < end[0]
    return match


def _uploads(bucket):
    client = boto3.session.Session().client("s3", endpoint_url=os.environ["S3_ENDPOINT"])
    return client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])


def test_a_save_with_4_threads_survives_2_seconds_of_slowdown(s3_env, s3_bucket,
                                                              fault_proxy):
    url = f"s3://{s3_bucket}/run/step-1"
    options = _options(fault_proxy)
    fault_proxy.fail_next(1 << 30, 503, "SlowDown", match=_for_seconds(2.0))
    writer = PfioWriter(url, thread_count=4, storage_options=options)
    dcp.save(_state(), storage_writer=writer, no_dist=True)
    assert fault_proxy.failed > 0, fault_proxy.failed
    loaded = {k: torch.zeros_like(v) for k, v in _state().items()}
    dcp.load(loaded, storage_reader=PfioReader(url, storage_options=options), no_dist=True)
    assert all(torch.equal(loaded[k], v) for k, v in _state().items())
    assert _uploads(s3_bucket) == []


def test_a_save_that_stays_throttled_raises_the_s3_error_and_aborts(s3_env, s3_bucket,
                                                                    fault_proxy, caplog):
    url = f"s3://{s3_bucket}/run/step-1"
    options = _options(fault_proxy, throttle_attempts=3)
    fault_proxy.fail_next(1 << 30, 503, "SlowDown",
                          match=lambda r: r.method == "PUT" and "partNumber" in r.target)
    writer = PfioWriter(url, thread_count=4, storage_options=options)
    with pytest.raises(CheckpointException) as raised:
        dcp.save(_state(), storage_writer=writer, no_dist=True)
    error = raised.value.failures[0][0]  # (the error, its traceback)
    assert isinstance(error, OSError) and "SlowDown (HTTP 503)" in str(error)
    assert "unexpected pos" not in str(error)
    assert any("SlowDown" in r.getMessage() and "failed" in r.getMessage()
               for r in caplog.records)  # the first failing part, logged with its cause
    fault_proxy.reset()
    assert _uploads(s3_bucket) == []  # the aborts went through after the throttling
