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
