"""Types of the C extension pfio.trace._native (see _native.c)."""

import io
from collections.abc import Callable
from types import TracebackType
from typing import Any

from .recorder import ThreadState

class Reader(io.BufferedReader):
    _rs: Any
    _st: ThreadState
    _scheme: str
    _url: str
    _opened: int | None
    _reads: int
    _read_bytes: int
    _read_ns: int
    def read(self, size: int | None = -1) -> bytes: ...
    def _span_close(self) -> None: ...
    def _span_exit(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                   tb: TracebackType | None) -> None: ...

class ReaderOpen:
    def __init__(self, slow: Callable[..., Any], hook: dict[str, Any], op: str, scheme: str,
                 os_path: Any, build: Any, cls: type[Reader], failed: Callable[..., Any],
                 spans: bool) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

def configure(namespace: dict[str, Any]) -> None: ...
