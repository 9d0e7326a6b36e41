"""A moto S3 server on 127.0.0.1 for tests, benchmarks and demos (real HTTP, no mocking).

>>> with MotoServer() as server:
...     fs = pfio.v2.S3("bucket", endpoint=server.endpoint, create_bucket=True)
"""

from __future__ import annotations

import inspect
import io
import logging
import os
import socket
import subprocess
import sys
import time
from types import TracebackType
from typing import Any

logger = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_port(host: str, port: int, process: subprocess.Popen[bytes],
                   timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with status {process.returncode}")
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    process.terminate()
    raise TimeoutError(f"moto server did not listen on {host}:{port} within {timeout}s")


#: moto's setting of the object size up to which it keeps an object in memory
KEY_BUFFER_SETTING = "MOTO_S3_DEFAULT_KEY_BUFFER_SIZE"
#: objects up to this size stay in memory (moto's default: about 5 MiB)
IN_MEMORY_OBJECTS = str(4 << 30)


def serve_ranges_in_place() -> None:
    """Make moto serve a GET of an object without copying the whole object first.

    moto answers every GET, ranged ones included, from ``FakeKey.value``, which copies the
    whole object out of its buffer (0.1 s for 200 MiB): a 1 KiB range of a large object
    costs as much as the object. S3 serves a range at the cost of the range. With objects
    in memory (:data:`KEY_BUFFER_SETTING`), this returns the buffer's bytes without a copy
    (``BytesIO.getvalue``); moto then slices the range out of them. Applied once per
    process; objects moto keeps in a temporary file are read as before.
    """
    from moto.s3.models import FakeKey

    current: property = inspect.getattr_static(FakeKey, "value")
    read_whole = current.fget
    if read_whole is None or getattr(read_whole, "serves_in_place", False):
        return

    def value(key: Any) -> bytes:
        buffer = getattr(key._value_buffer, "_file", None)
        if isinstance(buffer, io.BytesIO):
            with key.lock:
                return buffer.getvalue()
        data: bytes = read_whole(key)
        return data

    # (an attribute of the function: mypy knows none on a def)
    value.serves_in_place = True  # type: ignore[attr-defined]
    # (setattr: to mypy, FakeKey.value is a method, which cannot be assigned)
    setattr(FakeKey, "value", property(value, current.fset))  # noqa: B010


class MotoServer:
    """moto's ``ThreadedMotoServer`` on ``host`` at a free port, as a context manager.

    With ``separate_process=True`` the server runs in a child process instead (``python -m
    moto.server``, with ``env`` added to its environment, e.g. moto settings), so that it
    does not share the GIL with the client being measured.

    Objects are kept in memory (up to 4 GiB each; ``$MOTO_S3_DEFAULT_KEY_BUFFER_SIZE``
    overrides it) and served without a copy of the whole object
    (:func:`serve_ranges_in_place`), so that a ranged GET costs the size of its range, as on
    S3, and not that of the object. For the in-process server this sets that variable in
    this process's environment and changes moto's ``FakeKey`` class in this process.

    Attributes:
        endpoint: the server's URL, e.g. ``http://127.0.0.1:40123`` (set once started).
    """

    def __init__(self, host: str = "127.0.0.1", port: int | None = None,
                 separate_process: bool = False, env: dict[str, str] | None = None) -> None:
        self.host = host
        self.port = port
        self.separate_process = separate_process
        self.env = env or {}
        self.endpoint = ""
        self._server: Any = None

    def start(self) -> MotoServer:
        """Start the server (a no-op when it runs already)."""
        if self._server is not None:
            return self
        port = self.port or free_port(self.host)
        if self.separate_process:
            self._server = subprocess.Popen(
                [sys.executable, "-m", "pfio.testing.s3server", "-H", self.host, "-p", str(port)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={KEY_BUFFER_SETTING: IN_MEMORY_OBJECTS, **os.environ, **self.env})
            _wait_for_port(self.host, port, self._server)
        else:
            from moto.server import ThreadedMotoServer

            os.environ.setdefault(KEY_BUFFER_SETTING, IN_MEMORY_OBJECTS)
            serve_ranges_in_place()
            logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request
            self._server = ThreadedMotoServer(ip_address=self.host, port=port, verbose=False)
            self._server.start()
        self.port = port
        self.endpoint = f"http://{self.host}:{port}"
        logger.info("moto S3 server listening on %s", self.endpoint)
        return self

    def stop(self) -> None:
        """Stop the server (harmless when it is not running)."""
        server, self._server = self._server, None
        if isinstance(server, subprocess.Popen):
            server.terminate()
            server.wait(timeout=30)
        elif server is not None:
            server.stop()

    def __enter__(self) -> MotoServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"MotoServer({self.endpoint or 'stopped'})"


if __name__ == "__main__":  # the server process of MotoServer(separate_process=True)
    from moto.server import main

    serve_ranges_in_place()
    main(sys.argv[1:])
