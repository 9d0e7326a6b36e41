import json

import pytest

from pfio import trace
from pfio.cli import main
from pfio.fs.memory import MemoryFS


@pytest.fixture
def parts(spans, tmp_path):
    """Two parts of a run, as if written by processes 111 and 222."""
    paths = []
    for pid in (111, 222):
        trace.reset()
        fs = MemoryFS(f"cli-{pid}")
        with fs.open("f", "wb") as f:
            f.write(b"z" * 10)
        path = tmp_path / f"run.json.{pid}.json"
        trace.export_chrome_trace(path)
        doc = json.loads(path.read_text())
        doc["pfio"]["metrics"]["processes"] = [pid]
        for event in doc["traceEvents"]:
            event["pid"] = pid
        path.write_text(json.dumps(doc))
        paths.append(path)
    return paths


def test_summary_of_a_run_by_its_base_name(parts, capsys):
    assert main(["trace", "summary", str(parts[0].parent / "run.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pfio trace: 2 processes")
    line = next(ln for ln in out.splitlines() if ln.split()[:2] == ["mem", "write"])
    assert line.split()[2] == "2"


def test_summary_as_json(parts, capsys):
    assert main(["trace", "summary", "--json", *map(str, parts)]) == 0
    data = json.loads(capsys.readouterr().out)
    writes = [o for o in data["operations"] if o["operation"] == "write"]
    assert (writes[0]["count"], writes[0]["bytes"]) == (2, 20)


def test_merge_writes_one_trace_of_every_process(parts, tmp_path):
    out = tmp_path / "merged.json"
    assert main(["trace", "merge", *map(str, parts), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert {e["pid"] for e in doc["traceEvents"]} == {111, 222}
    assert doc["pfio"]["metrics"]["processes"] == [111, 222]


def test_a_missing_file_fails_with_one_line(tmp_path, capsys):
    assert main(["trace", "summary", str(tmp_path / "nothing")]) == 1
    assert "no trace file" in capsys.readouterr().err


def test_a_file_that_is_not_a_trace_fails(tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text('{"traceEvents": []}')
    assert main(["trace", "summary", str(other)]) == 1
    assert "not a pfio trace" in capsys.readouterr().err


def test_a_file_that_is_not_json_fails(tmp_path, capsys):
    other = tmp_path / "broken.json"
    other.write_text("{")
    assert main(["trace", "summary", str(other)]) == 1
    assert "not JSON" in capsys.readouterr().err


def test_an_action_is_required(capsys):
    assert main(["trace"]) == 2
