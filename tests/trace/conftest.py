import pytest

from pfio import trace
from pfio.trace import extension

BUILT = extension.EXTENSION


@pytest.fixture(autouse=True, params=["native", "python"])
def implementation(request, monkeypatch):
    """Every tracer test runs twice: with the C extension (built in the test environment:
    test_native.py fails where it is not) and with the pure-Python path it falls back to."""
    if request.param == "native" and BUILT is None:
        pytest.fail("pfio.trace._native is not built (pip install -e . builds it)")
    trace.disable()  # (the wrappers pick the implementation when tracing is enabled)
    monkeypatch.setattr(extension, "EXTENSION", BUILT if request.param == "native" else None)
    yield request.param
    trace.disable()


@pytest.fixture
def tracer():
    """Metrics-level tracing from zero, switched off afterwards."""
    trace.disable()
    trace.reset()
    trace.enable()
    yield trace
    trace.disable()
    trace.reset()


@pytest.fixture
def spans():
    """Spans-level tracing from zero, switched off afterwards."""
    trace.disable()
    trace.reset()
    trace.enable("spans")
    yield trace
    trace.disable()
    trace.reset()
