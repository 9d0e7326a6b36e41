import json
from collections import defaultdict

import pytest

from pfio import trace
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.trace import control, hook

SECRETS = ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "hunter2", "Signature=", "sig123")


def workload(tmp_path):
    fs = Local(tmp_path)
    for i in range(3):
        with fs.open(f"f{i}", "wb") as f:
            f.write(b"x" * 10)
    for i in range(3):
        with fs.open(f"f{i}", "rb") as f:
            f.read()
    fs.stat("f0")
    list(fs.list())
    hook.record_request("s3", "GET", status=200, nbytes=10, seconds=0.001,
                        url="https://AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI@host/b/k"
                            "?X-Amz-Signature=sig123&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE")
    hook.record_cache("objects", hit=True, nbytes=10, key="s3://user:hunter2@b/k")


@pytest.fixture
def exported(spans, tmp_path):
    workload(tmp_path)
    out = tmp_path / "trace.json"
    trace.export_chrome_trace(out)
    return out


def test_the_trace_is_well_formed_json_with_required_fields(exported):
    doc = json.loads(exported.read_text())
    events = doc["traceEvents"]
    assert events
    for e in events:
        assert e["ph"] in ("X", "M")
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["name"], str)
        if e["ph"] == "X":
            assert isinstance(e["ts"], float) and e["dur"] >= 0
            assert isinstance(e["cat"], str)


def test_timestamps_are_monotonic_per_thread(exported):
    by_thread = defaultdict(list)
    for e in json.loads(exported.read_text())["traceEvents"]:
        if e["ph"] == "X":
            by_thread[(e["pid"], e["tid"])].append(e["ts"])
    assert by_thread
    for stamps in by_thread.values():
        assert stamps == sorted(stamps)


def test_processes_and_threads_are_named(exported):
    meta = [e for e in json.loads(exported.read_text())["traceEvents"] if e["ph"] == "M"]
    assert {e["name"] for e in meta} == {"process_name", "thread_name"}
    assert all(e["args"]["name"] for e in meta)


def test_every_kind_of_span_is_there(exported):
    events = [e for e in json.loads(exported.read_text())["traceEvents"] if e["ph"] == "X"]
    names = [(e["cat"], e["name"]) for e in events]
    assert names.count(("file", "file")) == 6  # a file's span runs from open to close
    assert names.count(("fs", "close")) == 3  # the commits of the written files
    assert ("fs", "stat") in names and ("fs", "list") in names
    assert ("request", "S3 GET") in names and ("cache", "cache hit") in names
    reads = [e["args"] for e in events if e["name"] == "file" and "reads" in e["args"]]
    assert [(a["reads"], a["read_bytes"]) for a in reads] == [(1, 10)] * 3


def test_a_failed_open_is_a_span_with_an_error(spans, tmp_path):
    with pytest.raises(FileNotFoundError):
        Local(tmp_path).open("missing", "rb")
    out = tmp_path / "t.json"
    trace.export_chrome_trace(out)
    opens = [e for e in json.loads(out.read_text())["traceEvents"] if e["name"] == "open"]
    assert len(opens) == 1 and opens[0]["args"]["error"] is True
    assert opens[0]["args"]["path"].endswith("missing")


def test_the_trace_carries_the_metrics(exported):
    metrics = trace.Metrics.from_dict(json.loads(exported.read_text())["pfio"]["metrics"])
    assert metrics.operations[("file", "open")].count == 6


def test_secrets_never_appear_in_the_trace(exported):
    text = exported.read_text()
    for secret in SECRETS:
        assert secret not in text
    assert "host/b/k" in text


def test_secrets_never_appear_in_the_summary(spans, tmp_path):
    workload(tmp_path)
    text = trace.summary()
    for secret in SECRETS:
        assert secret not in text


def test_at_the_metrics_level_the_trace_has_no_spans(tracer, tmp_path):
    MemoryFS("nospans").exists("x")
    out = tmp_path / "t.json"
    trace.export_chrome_trace(out)
    doc = json.loads(out.read_text())
    assert not [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert doc["pfio"]["detail"] == "metrics"


def test_an_unclosed_file_still_becomes_a_span(spans):
    fs = MemoryFS("unclosed")
    with fs.open("u", "wb") as f:
        f.write(b"abc")
    assert fs.open("u", "rb").read() == b"abc"
    reads = trace.metrics().operations[("mem", "read")]
    assert (reads.count, reads.bytes) == (1, 3)


def test_spans_do_not_keep_their_filesystems_alive(spans, tmp_path):
    import gc
    import weakref

    (tmp_path / "k").write_bytes(b"x")
    fs = Local(tmp_path)
    fs.stat("k")
    with fs.open("k") as f:
        f.read()
    alive = weakref.ref(fs)
    del fs
    gc.collect()
    assert alive() is None
    out = tmp_path / "t.json"
    trace.export_chrome_trace(out)
    paths = {e["args"]["path"] for e in json.loads(out.read_text())["traceEvents"]
             if e["ph"] == "X"}
    assert paths == {str(tmp_path / "k")}


def test_kept_spans_cost_the_garbage_collector_nothing(exported):
    # every kind of span (file, operation, request, cache) is a flat tuple of strings,
    # numbers and None, which the collector stops tracking at its first collection
    import gc

    gc.collect()
    kept = [span for st in control.recorder().threads() for span in st.spans]
    assert {span[0] for span in kept} >= {"file", "fs", "request", "cache"}
    assert not [span for span in kept if gc.is_tracked(span)]


def test_spans_beyond_the_cap_are_dropped_and_counted(spans, tmp_path, monkeypatch):
    from pfio.trace import files, recorder

    monkeypatch.setattr(recorder, "MAX_SPANS", 2)
    monkeypatch.setattr(files, "MAX_SPANS", 2)
    (tmp_path / "d").write_bytes(b"x")
    fs = Local(tmp_path)
    for _ in range(3):
        with fs.open("d", "rb") as f:
            f.read()
    fs.stat("d")
    out = tmp_path / "t.json"
    trace.export_chrome_trace(out)
    doc = json.loads(out.read_text())
    assert len([e for e in doc["traceEvents"] if e["ph"] == "X"]) == 2
    assert doc["pfio"]["dropped_spans"] == 2
