"""S3 errors that quote the request's URL (urllib3's and botocore's connection errors do)
show no presigned query string or credential."""

from __future__ import annotations

import logging

import pytest

from pfio.fs.s3.retry import RetryPolicy, call

SECRETS = ("SIGabc123", "CREDkey456", "TOKENxyz789")
MESSAGE = ("HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: "
           "/bkt/k?X-Amz-Credential=CREDkey456&X-Amz-Security-Token=TOKENxyz789"
           "&X-Amz-Signature=SIGabc123 (Caused by connection refused)")


def refused():
    raise ConnectionError(MESSAGE)


def test_error_after_retries_shows_no_secret(caplog):
    with caplog.at_level(logging.DEBUG, logger="pfio.fs.s3.retry"), \
            pytest.raises(OSError) as info:
        call(RetryPolicy(max_attempts=2, base=0, cap=0), "GET", "s3://bkt/k", refused)
    text = str(info.value)
    assert "s3://bkt/k" in text and "ConnectionError" in text and "Max retries" in text
    for secret in SECRETS:
        assert secret not in text
        assert secret not in caplog.text
    assert "retrying" in caplog.text
