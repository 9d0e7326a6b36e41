import pytest

from pfio import trace
from pfio.fs.memory import MemoryFS

torch = pytest.importorskip("torch")


def test_calls_appear_in_torch_profiler():
    fs = MemoryFS("torch-profiler")
    with fs.open("x", "wb") as f:
        f.write(b"1")
    trace.enable(torch_profiler=True)
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            fs.stat("x")
            with fs.open("x", "rb") as f:
                f.read()
    finally:
        trace.disable()
        trace.reset()
    names = {e.name for e in prof.events()}
    assert {"pfio.mem.stat", "pfio.mem.open"} <= names


def test_without_the_flag_nothing_is_marked():
    fs = MemoryFS("torch-profiler-off")
    with trace.tracing():
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            fs.exists("x")
    trace.reset()
    assert not [e.name for e in prof.events() if e.name.startswith("pfio.")]


def test_asking_for_marks_while_on_marks_local_reads_too(tmp_path):
    from pfio.fs.local import Local

    (tmp_path / "x").write_bytes(b"1")
    fs = Local(tmp_path)
    trace.enable()
    try:
        trace.enable(torch_profiler=True)  # while on: the fast local reader gives way
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            with fs.open("x", "rb") as f:
                assert f.read() == b"1"
        assert trace.metrics().operations[("file", "read")].count == 1
    finally:
        trace.disable()
        trace.reset()
    assert "pfio.file.open" in {e.name for e in prof.events()}
