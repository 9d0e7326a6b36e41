"""S3 over https: a TLS-terminating proxy on loopback, in front of the test server, with a
certificate authority the ``tls`` fixture makes (see ``conftest.py``); the CA reaches the
client through ``AWS_CA_BUNDLE``."""

from __future__ import annotations

import pytest

from pfio.fs.s3 import S3


def test_https_with_the_ca_bundle_of_aws_ca_bundle(s3_env: str, s3_bucket: str, tls,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    proxy, ca = tls
    monkeypatch.setenv("AWS_CA_BUNDLE", str(ca))
    fs = S3(s3_bucket, endpoint=proxy.endpoint, mpu_chunksize=5 << 20)
    data = bytes(range(256)) * 40_000  # 10 MB: two parts
    with fs.open("secure", "wb") as f:
        f.write(data)
    with fs.open("secure", "rb") as f:
        assert f.read() == data
    assert fs.list() is not None and "secure" in list(fs.list())


def test_an_unknown_certificate_is_refused_naming_the_url(s3_env: str, s3_bucket: str,
                                                          tls, monkeypatch) -> None:
    proxy, _ = tls
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)
    fs = S3(s3_bucket, endpoint=proxy.endpoint, max_attempts=2)
    with pytest.raises(OSError, match=f"s3://{s3_bucket}/k"):
        fs.open("k", "rb")
