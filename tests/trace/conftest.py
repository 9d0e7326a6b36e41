import pytest

from pfio import trace


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
