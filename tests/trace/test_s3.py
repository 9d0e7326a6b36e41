"""The tracer on S3 (a moto server over real HTTP): operations and requests counted exactly."""

from collections import Counter

import pytest

from pfio import trace

pytest.importorskip("boto3")


@pytest.fixture
def fs(s3_env, s3_bucket):
    from pfio.fs.s3 import S3

    return S3(s3_bucket)


def test_scripted_workload_on_s3_is_counted_exactly(tracer, fs, s3_requests):
    log = s3_requests(fs)
    for i in range(2):
        with fs.open(f"d/f{i}.bin", "wb") as f:
            f.write(b"s" * 3000)
    for i in range(2):
        with fs.open(f"d/f{i}.bin", "rb") as f:
            assert len(f.read()) == 3000
    fs.stat("d/f0.bin")
    assert sorted(fs.list("d")) == ["f0.bin", "f1.bin"]
    with pytest.raises(FileNotFoundError):
        fs.stat("d/missing")

    m = trace.metrics()
    ops = {op: s for (scheme, op), s in m.operations.items() if scheme == "s3"}
    assert ops["open"].count == 4
    assert (ops["write"].count, ops["write"].bytes) == (2, 6000)
    assert (ops["read"].count, ops["read"].bytes) == (2, 6000)
    assert (ops["stat"].count, ops["stat"].errors) == (2, 1)
    assert ops["list"].count == 1
    assert ops["close"].count == 2

    ours = Counter({method: s.count for (scheme, method), s in m.requests.items()
                    if scheme == "s3"})
    sent = Counter(method for method, _, _ in log)
    assert ours["GET"] + ours["LIST"] == sent["GET"]
    for method in ("PUT", "HEAD", "POST", "DELETE"):
        assert ours[method] == sent[method], method
    assert m.requests[("s3", "GET")].bytes == 6000
    assert sum(s.errors for (scheme, _), s in m.requests.items() if scheme == "s3") >= 1


def test_s3_urls_in_spans_carry_no_credentials(spans, fs, tmp_path):
    with fs.open("k", "wb") as f:
        f.write(b"1")
    fs.stat("k")
    out = tmp_path / "t.json"
    trace.export_chrome_trace(out)
    text = out.read_text()
    assert "pfio-test-secret" not in text and "pfio-test-key" not in text
    assert '"S3 HEAD"' in text or '"S3 GET"' in text
