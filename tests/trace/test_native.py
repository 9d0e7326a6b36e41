"""The C extension pfio.trace._native and the pure-Python path it stands in for: the same
reads, counts and errors (every test runs on both, see conftest.py)."""

import io
import os
import threading

import pytest

from pfio import trace
from pfio.fs.local import Local
from pfio.trace import extension, files
from pfio.trace.stats import OpStats, fold

from .conftest import BUILT

PAYLOAD = bytes(range(256)) * 40  # 10,240 bytes


def reads():
    return trace.metrics().operations[("file", "read")]


@pytest.fixture
def fs(tmp_path):
    (tmp_path / "d.bin").write_bytes(PAYLOAD)
    return Local(tmp_path)


def test_the_extension_is_built_where_the_tests_run():
    # pip install -e . builds it (setup.py): a build that silently stopped must fail here
    assert BUILT is not None, "pfio.trace._native is not built"
    assert BUILT.__file__.endswith(".so")


def test_each_implementation_builds_its_own_readers(tracer, fs, implementation):
    with fs.open("d.bin", "rb") as f:
        native = type(f).__module__ == "pfio.trace._native"
    assert native == (implementation == "native")
    assert isinstance(f, io.BufferedReader) and not isinstance(f, files.TracedFile)


@pytest.mark.parametrize("level", ["metrics", "spans"])
def test_read_sizes_count_what_they_return(fs, level):
    trace.enable(level)
    with fs.open("d.bin", "rb") as f:
        assert f.read(0) == b""
        assert f.read(100) == PAYLOAD[:100]
        assert f.read(size=50) == PAYLOAD[100:150]
        assert f.read(None) == PAYLOAD[150:]
        assert f.read() == b""  # at the end
        assert f.read(10) == b""
    assert (reads().count, reads().bytes) == (6, len(PAYLOAD))


def test_read_to_the_end_counts_every_byte(tracer, fs):
    with fs.open("d.bin", "rb") as f:
        assert f.read(-1) == PAYLOAD
    assert (reads().count, reads().bytes) == (1, len(PAYLOAD))


@pytest.mark.parametrize("args, kwargs", [((1, 2), {}), ((), {"n": 1}), ((1,), {"size": 2})])
def test_bad_arguments_raise_type_error_and_count_nothing(tracer, fs, args, kwargs):
    with fs.open("d.bin", "rb") as f:
        with pytest.raises(TypeError):
            f.read(*args, **kwargs)
        with pytest.raises(TypeError):
            f.read("1")  # as io.BufferedReader
    assert ("file", "read") not in trace.metrics().operations


@pytest.mark.parametrize("level", ["metrics", "spans"])
def test_reading_a_closed_file_raises_as_a_buffered_reader_does(fs, tmp_path, level):
    plain = open(tmp_path / "d.bin", "rb")  # noqa: SIM115 - closed on purpose
    plain.close()
    with pytest.raises(ValueError) as expected:
        plain.read()
    trace.enable(level)
    f = fs.open("d.bin", "rb")
    f.close()
    with pytest.raises(ValueError) as got:
        f.read()
    assert str(got.value) == str(expected.value)
    assert ("file", "read") not in trace.metrics().operations


@pytest.mark.parametrize("level", ["metrics", "spans"])
def test_an_error_inside_read_propagates_and_counts_nothing(fs, tmp_path, level):
    trace.enable(level)
    f = fs.open("d.bin", "rb")
    assert f.read(10) == PAYLOAD[:10]
    os.close(f.fileno())  # the next read from the OS fails
    with pytest.raises(OSError):
        f.read()
    with pytest.raises(OSError):
        f.close()
    assert (reads().count, reads().bytes) == (1, 10)
    if level == "spans":
        (span,) = [s for st in trace.control.recorder().threads() for s in st.spans]
        assert span[7:10] == (1, 10, span[9]) and span[0] == "file"


def test_a_span_is_kept_once_however_often_the_file_is_closed(spans, fs):
    f = fs.open("d.bin", "rb")
    f.read(3)
    f.close()
    f.close()
    f.__exit__(None, None, None)
    kept = [s for st in trace.control.recorder().threads() for s in st.spans]
    assert [s[7:9] for s in kept] == [(1, 3)]
    assert f._opened is None


def test_a_reader_dropped_unclosed_keeps_its_span(spans, fs):
    f = fs.open("d.bin", "rb")
    f.read(7)
    del f
    kept = [s for st in trace.control.recorder().threads() for s in st.spans]
    assert [s[7:9] for s in kept] == [(1, 7)]


@pytest.mark.parametrize("level", ["metrics", "spans"])
def test_many_threads_at_once_count_exact_totals(fs, level):
    trace.enable(level)
    threads, files_each, start = 8, 200, threading.Barrier(8)

    def work():
        start.wait()
        for _ in range(files_each):
            with fs.open("d.bin", "rb") as f:
                while f.read(4000):
                    pass

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    got = trace.metrics().operations
    assert got[("file", "open")].count == threads * files_each
    # 4000 + 4000 + 2240 + the empty read at the end, per file
    assert (reads().count, reads().bytes) == (threads * files_each * 4,
                                              threads * files_each * len(PAYLOAD))
    total = reads()
    total.compact()
    assert sum(total.hist.values()) == total.count
    if level == "spans":
        kept = [s for st in trace.control.recorder().threads() for s in st.spans]
        assert len(kept) == threads * files_each
        assert {s[7:9] for s in kept} == {(4, len(PAYLOAD))}


def test_fold_buckets_as_a_logarithm_each(implementation):
    raw = [0, 1, 2, 3, 15, 16, 17, 1000, 4095, 4096, 10**6, 10**9, 2**40 + 7, 2**61]
    raw += list(range(0, 70_000, 7))
    hist = {}
    fold(hist, list(raw))
    expected = {}
    for d in raw:
        index = int(__import__("math").log2(d + 1) * 16)
        expected[index] = expected.get(index, 0) + 1
    assert hist == expected


def test_fold_leaves_what_c_cannot_take_to_python(implementation):
    if implementation == "native":
        hist = {}
        assert extension.EXTENSION.fold(hist, [1, 2**63, 3]) is False and hist == {}
        assert extension.EXTENSION.fold(hist, [1, 2.5]) is False and hist == {}
    stats = OpStats()
    stats.raw.extend([1, 2**63, 3])
    stats.compact()
    assert stats.count == 3 and sum(stats.hist.values()) == 3


@pytest.mark.parametrize("level", ["metrics", "spans"])
def test_every_call_shape_of_open_rb_counts_alike(fs, level):
    # positional (C's fast path), named, on the class, bound first: the same reader, counts
    trace.enable(level)
    bound = fs.open  # (a method object, as the wrappers are descriptors)
    calls = [lambda: fs.open("d.bin", "rb"), lambda: fs.open("d.bin", mode="rb"),
             lambda: Local.open(fs, "d.bin", "rb"), lambda: bound("d.bin", "rb")]
    kinds = set()
    for call in calls:
        with call() as f:
            kinds.add(type(f))
            assert f.read(5) == PAYLOAD[:5]
    assert len(kinds) == 1
    assert trace.metrics().operations[("file", "open")].count == len(calls)
    assert (reads().count, reads().bytes) == (len(calls), 5 * len(calls))
    if level == "spans":
        kept = [s for st in trace.control.recorder().threads() for s in st.spans]
        assert [s[7:9] for s in kept] == [(1, 5)] * len(calls)


def test_a_failed_open_counts_as_an_error(tracer, fs):
    with pytest.raises(FileNotFoundError):
        fs.open("missing.bin", "rb")
    stats = trace.metrics().operations[("file", "open")]
    assert (stats.count, stats.errors) == (1, 1)
