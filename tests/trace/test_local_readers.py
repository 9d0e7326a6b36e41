"""Local files opened "rb" while tracing: readers that count their own reads (no proxy)."""

import gc
import io
import json

import pytest

from pfio import trace
from pfio.fs.local import Local
from pfio.trace.files import TracedFile


def reads():
    return trace.metrics().operations[("file", "read")]


def file_spans(tmp_path):
    out = tmp_path / "trace.json"
    trace.export_chrome_trace(out)
    return [e for e in json.loads(out.read_text())["traceEvents"] if e.get("name") == "file"]


@pytest.fixture
def data(tmp_path):
    (tmp_path / "d.bin").write_bytes(b"line one\nline two\n")
    return Local(tmp_path)


def test_every_kind_of_read_counts_its_calls_and_bytes(tracer, data):
    with data.open("d.bin", "rb") as f:
        assert f.read(2) == b"li"
        assert f.read1(3) == b"ne "
        buf = bytearray(4)
        assert f.readinto(buf) == 4
        assert f.readinto1(buf) == 4
        assert f.readline() == b" two\n"
    assert (reads().count, reads().bytes) == (5, 18)


def test_iterating_counts_each_readline_call(tracer, data):
    with data.open("d.bin", "rb") as f:
        assert list(f) == [b"line one\n", b"line two\n"]
    # iteration calls readline until it returns nothing: 2 lines and the end
    assert (reads().count, reads().bytes) == (3, 18)


def test_a_file_opened_but_never_read_reports_no_reads(tracer, data):
    data.open("d.bin", "rb").close()
    got = trace.metrics().operations
    assert got[("file", "open")].count == 1
    assert ("file", "read") not in got


def test_the_reader_behaves_as_open_rb(tracer, data, tmp_path):
    with data.open("d.bin", "rb") as f, open(tmp_path / "d.bin", "rb") as plain:
        assert type(f) is not TracedFile and isinstance(f, io.BufferedReader)
        assert (f.name, f.mode, f.raw.name) == (plain.name, plain.mode, plain.raw.name)
        assert f.peek(1)[:1] == b"l" and f.seek(5) == 5 and f.read() == plain.read()[5:]


def test_a_missing_file_is_a_counted_error(tracer, data):
    with pytest.raises(FileNotFoundError):
        data.open("missing.bin", "rb")
    assert trace.metrics().operations[("file", "open")].errors == 1


def test_a_directory_is_a_counted_error(tracer, data, tmp_path):
    (tmp_path / "sub").mkdir()
    with pytest.raises(IsADirectoryError):
        data.open("sub", "rb")
    assert trace.metrics().operations[("file", "open")].errors == 1


def test_a_subclass_that_maps_paths_its_own_way_is_opened_by_its_own_code(tracer, tmp_path):
    class Prefixed(Local):
        def _path(self, path):
            return super()._path(f"p-{path}")

    (tmp_path / "p-x").write_bytes(b"abc")
    with Prefixed(tmp_path).open("x", "rb") as f:
        assert f.read() == b"abc"
    assert (reads().count, reads().bytes) == (1, 3)


def test_a_reader_becomes_one_span_with_its_totals_and_path(spans, data, tmp_path):
    with data.open("d.bin", "rb") as f:
        f.read(4)
        f.read()
    [span] = file_spans(tmp_path)
    args = span["args"]
    assert (args["reads"], args["read_bytes"]) == (2, 18)
    assert args["path"] == str(tmp_path / "d.bin") and args["scheme"] == "file"
    assert span["dur"] >= args["read_seconds"] * 1e6


def test_a_spanned_reader_counts_every_kind_of_read_in_its_span(spans, data, tmp_path):
    with data.open("d.bin", "rb") as f:
        f.read1(4)
        f.readline()
        f.readinto(bytearray(4))
    [span] = file_spans(tmp_path)
    assert (span["args"]["reads"], span["args"]["read_bytes"]) == (3, 13)
    assert (reads().count, reads().bytes) == (3, 13)


def test_a_reader_dropped_unclosed_still_becomes_a_span(spans, data, tmp_path):
    f = data.open("d.bin", "rb")
    f.read()
    del f
    gc.collect()
    [span] = file_spans(tmp_path)
    assert span["args"]["read_bytes"] == 18


def test_span_paths_are_urls_built_at_export(spans, tmp_path):
    from pfio.fs.memory import MemoryFS

    fs = MemoryFS("lazy-urls")
    with pytest.raises(FileNotFoundError):
        fs.stat("d/missing")
    out = tmp_path / "t.json"
    trace.export_chrome_trace(out)
    [stat] = [e for e in json.loads(out.read_text())["traceEvents"] if e["name"] == "stat"]
    assert stat["args"]["path"] == "mem://lazy-urls/d/missing"


@pytest.mark.parametrize("level", ["metrics", "spans"])
def test_eight_threads_reading_at_once_add_up_exactly(level, tmp_path):
    import threading

    from pfio.trace.stats import RAW_LIMIT

    (tmp_path / "t.bin").write_bytes(b"x" * 100)
    fs = Local(tmp_path)
    per_thread = RAW_LIMIT + 7  # each thread folds its durations at least once meanwhile
    start = threading.Barrier(8)

    def work():
        start.wait()
        for _ in range(per_thread):
            with fs.open("t.bin", "rb") as f:
                f.read(60)
                f.read()

    trace.disable()
    trace.reset()
    trace.enable(level)
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ops = trace.metrics().operations
        opens, read = ops[("file", "open")], ops[("file", "read")]
        assert (opens.count, opens.errors) == (8 * per_thread, 0)
        assert (read.count, read.bytes) == (16 * per_thread, 800 * per_thread)
        read.compact()  # every duration in the histogram
        assert sum(read.hist.values()) == read.count and read.ns > 0
        if level == "spans":
            kept = [s for s in trace.control.recorder().threads() for s in s.spans]
            assert len(kept) == 8 * per_thread
    finally:
        trace.disable()
        trace.reset()


def test_switching_to_spans_while_on_makes_the_next_reader_a_span(tracer, data, tmp_path):
    with data.open("d.bin", "rb") as f:
        f.read()
    assert file_spans(tmp_path) == []
    trace.enable("spans")  # while on: the readers opened from now on keep spans
    with data.open("d.bin", "rb") as f:
        f.read(4)
    (span,) = file_spans(tmp_path)
    assert (span["args"]["reads"], span["args"]["read_bytes"]) == (1, 4)
    assert (reads().count, reads().bytes) == (2, 22)
    trace.enable("metrics")  # and back: no more spans
    with data.open("d.bin", "rb") as f:
        f.read()
    assert len(file_spans(tmp_path)) == 1 and reads().count == 3
