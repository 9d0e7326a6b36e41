import pytest

from pfio import trace
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.trace import hook


def ops(scheme):
    return {op: s for (sch, op), s in trace.metrics().operations.items() if sch == scheme}


def scripted(fs):
    """3 writes of 1000 bytes (2 calls each), 3 reads, 1 stat, 1 listing, 1 missing stat."""
    for i in range(3):
        with fs.open(f"d/f{i}.bin", "wb") as f:
            f.write(b"a" * 400)
            f.write(b"b" * 600)
    for i in range(3):
        with fs.open(f"d/f{i}.bin", "rb") as f:
            assert len(f.read()) == 1000
    fs.stat("d/f0.bin")
    assert sorted(fs.list("d")) == ["f0.bin", "f1.bin", "f2.bin"]
    with pytest.raises(FileNotFoundError):
        fs.stat("d/missing")


@pytest.mark.parametrize("make", [
    lambda tmp_path, name: MemoryFS(name),
    lambda tmp_path, name: Local(tmp_path, create=True),
], ids=["mem", "local"])
def test_scripted_workload_is_counted_exactly(tracer, tmp_path, request, make):
    fs = make(tmp_path, request.node.name)
    if fs.scheme == "file":
        fs.mkdir("d")
    scripted(fs)
    got = ops(fs.scheme)
    assert got["open"].count == 6
    assert (got["write"].count, got["write"].bytes) == (6, 3000)
    assert (got["read"].count, got["read"].bytes) == (3, 3000)
    assert got["close"].count == 3  # the commits of the written files
    assert (got["stat"].count, got["stat"].errors) == (2, 1)
    assert got["list"].count == 1
    assert all(s.seconds > 0 for s in got.values())


def test_latency_percentiles_are_ordered(tracer, tmp_path):
    fs = MemoryFS("percentiles")
    for i in range(50):
        fs.makedirs(f"x{i}", exist_ok=True)
    s = ops("mem")["makedirs"]
    assert 0 < s.p50 <= s.p90 <= s.p99


def test_a_call_made_inside_another_counts_once(tracer):
    fs = MemoryFS("nested")
    fs.exists("nothing")  # the base exists() calls stat()
    got = ops("mem")
    assert got["exists"].count == 1
    assert "stat" not in got


def test_text_files_count_characters(tracer, tmp_path):
    fs = Local(tmp_path)
    (tmp_path / "t.txt").write_text("héllo\nworld\n", encoding="utf-8")
    with fs.open("t.txt", "r", encoding="utf-8") as f:
        assert list(f) == ["héllo\n", "world\n"]
    assert (ops("file")["read"].count, ops("file")["read"].bytes) == (2, 12)


def test_a_traced_file_behaves_as_the_file(tracer, tmp_path):
    (tmp_path / "b").write_bytes(b"0123456789")
    with Local(tmp_path).open("b", "rb") as f:
        f.seek(4)
        assert f.read(3) == b"456"
        assert f.tell() == 7
        buf = bytearray(2)
        assert f.readinto(buf) == 2 and buf == b"78"
    assert f.closed
    assert ops("file")["read"].bytes == 5


def test_a_failed_write_is_not_published_and_counts_an_error(tracer):
    fs = MemoryFS("failed-write")
    with pytest.raises(RuntimeError), fs.open("x", "wb") as f:
        f.write(b"partial")
        raise RuntimeError("boom")
    assert not fs.exists("x")
    assert ops("mem")["write"].bytes == 7


def test_disabling_puts_the_original_methods_back():
    original = Local.__dict__["open"]
    trace.enable()
    try:
        assert Local.__dict__["open"] is not original
        assert getattr(Local.__dict__["open"], "__wrapped__", None) is original
    finally:
        trace.disable()
    assert Local.__dict__["open"] is original
    assert "stat" not in MemoryFS.__dict__ or not hasattr(MemoryFS.stat, "__pfio_traced__")


def test_nothing_is_counted_while_disabled(tracer):
    trace.disable()
    trace.reset()
    MemoryFS("off").exists("x")
    assert trace.metrics().operations == {}


def test_tracing_context_switches_off_at_the_end():
    with trace.tracing():
        assert trace.is_enabled()
        MemoryFS("ctx").exists("x")
    assert not trace.is_enabled()
    assert ops("mem")["exists"].count == 1
    trace.reset()


def test_enabling_again_keeps_what_was_recorded(tracer):
    MemoryFS("again").exists("x")
    trace.enable("spans")
    MemoryFS("again").exists("x")
    assert ops("mem")["exists"].count == 2


def test_reset_forgets(tracer):
    MemoryFS("reset").exists("x")
    trace.reset()
    assert trace.metrics().operations == {}


def test_an_unknown_detail_level_is_refused():
    with pytest.raises(ValueError, match="detail"):
        trace.enable("everything")
    assert not trace.is_enabled()


def test_a_class_defined_while_tracing_is_traced(tracer):
    class Custom(MemoryFS):
        scheme = "custom"

    Custom("custom").exists("x")
    assert ops("custom")["exists"].count == 1


def test_backend_requests_are_counted_with_statuses_and_retries(tracer):
    class Remote(MemoryFS):
        scheme = "remote"

        def stat(self, path):
            hook.record_request("remote", "HEAD", status=200, seconds=0.001, attempts=3)
            return super().stat(path)

    fs = Remote("remote")
    with fs.open("o", "wb") as f:
        f.write(b"x")
    fs.stat("o")
    hook.record_request("remote", "GET", status=206, nbytes=10, seconds=0.002)
    hook.record_request("remote", "GET", status=503, seconds=0.002, error=True)
    m = trace.metrics()
    head, get = m.requests[("remote", "HEAD")], m.requests[("remote", "GET")]
    assert (head.count, head.retries, head.statuses) == (1, 2, {"200": 1})
    assert (get.count, get.bytes, get.errors, get.statuses) == (2, 10, 1, {"206": 1, "503": 1})
    assert m.operations[("remote", "stat")].retries == 2


def test_cache_lookups_are_counted(tracer):
    hook.record_cache("objects", hit=True, nbytes=100, seconds=0.001)
    hook.record_cache("objects", hit=True, nbytes=50)
    hook.record_cache("objects", hit=False, nbytes=70)
    c = trace.metrics().caches["objects"]
    assert (c.hits, c.misses, c.hit_bytes, c.miss_bytes) == (2, 1, 150, 70)
    assert c.hit_ratio == pytest.approx(2 / 3)


def test_reported_operations_and_spans_count(tracer):
    hook.record_op("patch", "cv2.imread/spool", 0.01, nbytes=5, path="s3://b/k")
    with hook.span("patch", "numpy.load") as s:
        s.nbytes = 8
    with pytest.raises(KeyError), hook.span("patch", "numpy.load"):
        raise KeyError("x")
    got = ops("patch")
    assert (got["cv2.imread/spool"].count, got["cv2.imread/spool"].bytes) == (1, 5)
    assert (got["numpy.load"].count, got["numpy.load"].bytes, got["numpy.load"].errors) == (2, 8, 1)


def test_the_hook_does_nothing_while_disabled():
    assert not hook.ENABLED
    hook.record_request("s3", "GET")
    hook.record_cache("c", True)
    hook.record_op("x", "y", 0.1)


def test_summary_is_a_readable_table(tracer):
    fs = MemoryFS("summary")
    with fs.open("a", "wb") as f:
        f.write(b"x" * 2048)
    hook.record_request("s3", "PUT", status=200, nbytes=2048, seconds=0.01)
    hook.record_cache("objects", hit=False)
    text = trace.summary()
    assert "operations" in text and "backend requests" in text and "caches" in text
    line = next(ln for ln in text.splitlines() if ln.split()[:2] == ["mem", "write"])
    assert "2.0 KiB" in line


def test_the_summary_of_nothing_says_so(tracer):
    assert "nothing recorded" in trace.summary()


def test_threads_are_added_up(tracer):
    import threading

    fs = MemoryFS("threads")
    threads = [threading.Thread(target=lambda: [fs.exists("x") for _ in range(10)])
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ops("mem")["exists"].count == 40


def test_a_listing_counts_the_time_inside_it_once_exhausted(tracer, tmp_path):
    for i in range(3):
        (tmp_path / f"f{i}").write_bytes(b"")
    listing = Local(tmp_path).list()
    assert "list" not in ops("file")
    assert len(list(listing)) == 3
    assert ops("file")["list"].count == 1


def test_a_failing_listing_counts_an_error(tracer):
    with pytest.raises(FileNotFoundError):
        list(MemoryFS("nolist").list("missing"))
    assert ops("mem")["list"].errors == 1


def test_a_traced_local_file_is_a_buffered_reader(tracer, tmp_path):
    import io

    (tmp_path / "c").write_bytes(b"x")
    with Local(tmp_path).open("c", "rb") as f:
        assert isinstance(f, io.BufferedReader)
        assert f.name == str(tmp_path / "c") and f.mode == "rb"


def test_a_traced_file_passes_for_its_class(tracer):
    fs = MemoryFS("passes")
    with fs.open("c", "wb") as f:
        f.write(b"x")
    with fs.open("c", "rb") as f:
        assert type(f).__name__ == "TracedFile"
        assert isinstance(f, type(f._f))


def test_a_listing_stopped_early_is_not_an_error(tracer, tmp_path):
    for i in range(3):
        (tmp_path / f"f{i}").write_bytes(b"")
    listing = Local(tmp_path).list()
    next(listing)
    listing.close()
    got = ops("file")["list"]
    assert (got.count, got.errors) == (1, 0)


def test_an_archive_is_counted_under_its_kind(tracer, tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        z.writestr("m.txt", "x" * 10)
    with Local(tmp_path).open_zip("a.zip") as archive:
        with archive.open("m.txt", "rb") as f:
            f.read()
        archive.stat("m.txt")
    got = ops("zip")
    assert (got["open"].count, got["read"].bytes, got["stat"].count) == (1, 10, 1)
