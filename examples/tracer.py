"""The tracer: every IO operation timed and counted; a summary table and a Chrome trace."""

import tempfile

import pfio
from pfio import trace

fs = pfio.from_url("mem://traced")
with trace.tracing("spans"):
    for i in range(5):
        with fs.open(f"f{i}.bin", "wb") as f:
            f.write(b"x" * 1000)
    for name in fs.list():
        fs.open(name, "rb").read()
    metrics = trace.metrics()
    print(metrics.operations[("mem", "read")].count)  # 5
    print(metrics.operations[("mem", "read")].nbytes)  # 5000
    print(trace.summary())
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        trace.export_chrome_trace(out.name)  # open it in https://ui.perfetto.dev
