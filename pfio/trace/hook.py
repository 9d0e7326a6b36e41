"""The one small hook through which backends, caches and patches report to the tracer.

Call sites check :data:`ENABLED` first, so a disabled tracer costs one global look-up::

    from pfio.trace import hook
    if hook.ENABLED:
        hook.record_request("s3", "GET", status=206, nbytes=n, seconds=dt, attempts=1)
"""

from __future__ import annotations

#: True while tracing is on; read it before calling any function below.
ENABLED = False


def record_request(scheme: str, method: str, status: int | None = None, nbytes: int = 0,
                   seconds: float = 0.0, attempts: int = 1, error: bool = False,
                   url: str | None = None) -> None:
    """Report one backend request (an S3 GET, PUT, HEAD, LIST, ...)."""
