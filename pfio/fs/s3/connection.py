"""``S3Connection``: what the readers and writers of one S3 filesystem talk to.

One connection object holds, per process: the engine that sends every request (see
:mod:`pfio.fs.s3.engine`), the botocore client that is the engine's credential chain (and,
for the ``boto3`` engine, its client: :mod:`pfio.fs.s3.botocore_client`), the pool of
background threads, the retry policy and the URL of a key. It is created lazily in each
process (a forked child, a spawned or forkserver worker all make their own engine), so it
may be pickled with the filesystem and its open readers.

The engines: ``"http"`` (the default: pfio's own HTTP/1.1 client on the standard library's
sockets, :mod:`pfio.fs.s3.http_engine`) and ``"boto3"`` (botocore,
:mod:`pfio.fs.s3.boto3_engine`). One is chosen by ``S3(engine=...)``, else
``$PFIO_S3_ENGINE``, else ``"http"`` (:mod:`pfio.fs.s3.settings`); ``"boto3"`` is always
used while moto's in-process ``mock_aws`` is active (it intercepts botocore, which the other
engines bypass).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from ...trace.ppe import ProfiledCalls
from ...trace.redact import redact
from .botocore_client import make_client, mock_aws_active
from .credentials import known_session
from .engine import BodyRest, BodySink, Engine, RequestHook
from .retry import RetryPolicy, call
from .settings import DEFAULT_ENGINE, ENGINES, S3Settings, requested_engine
from .threads import WorkerPool

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: how a profiled connection's requests are recorded in pytorch-pfn-extras' profiler: as
#: PFIO 2.x recorded its botocore calls (``pfio.boto3:get_object``, ``:put_object``, ...)
PROFILE_PREFIX = "pfio.boto3"
PROFILE_NAMES = {"get": "get_object"}


def engine_name(requested: str | None) -> str:
    """The engine to use now: ``"boto3"`` while ``mock_aws`` is active, else ``requested``,
    else :data:`DEFAULT_ENGINE`."""
    if mock_aws_active():
        return "boto3"
    return requested or DEFAULT_ENGINE


class _Transport:
    """The engine, botocore client and request hooks of one process for one set of
    settings (shared by the connections of all buckets with those settings)."""

    def __init__(self, settings: S3Settings) -> None:
        self.settings = settings
        self.lock = threading.RLock()  # an engine's factory may make the client
        self.engines: dict[str, Engine] = {}
        self.client: Any = None
        self.hooks: list[RequestHook] = []


_transports: tuple[int, dict[S3Settings, _Transport], threading.Lock] = \
    (os.getpid(), {}, threading.Lock())


#: the transports of the parent processes, in a forked child: kept, never finalized (their
#: connections are the parent's: the child must not shut them down or read from them)
_inherited: list[dict[S3Settings, _Transport]] = []


def _transport(settings: S3Settings) -> _Transport:
    """This process's transport for ``settings`` (none survive a fork)."""
    global _transports
    if _transports[0] != os.getpid():
        _inherited.append(_transports[1])
        _transports = (os.getpid(), {}, threading.Lock())
    table, lock = _transports[1], _transports[2]
    transport = table.get(settings)
    if transport is None:
        with lock:
            transport = table.setdefault(settings, _Transport(settings))
    return transport


class S3Connection:
    """The transport of one bucket (see the module documentation).

    Args:
        bucket: the bucket.
        settings: endpoint, credentials, timeouts, engine.
        retry: how requests are retried.
        profiled: record every request in pytorch-pfn-extras' profiler (``pfio.boto3:<engine
            method>``, for a filesystem made with PFIO 2.x's ``trace=True``; see
            :mod:`pfio.trace.ppe`).
    """

    def __init__(self, bucket: str, settings: S3Settings, retry: RetryPolicy,
                 profiled: bool = False) -> None:
        self.bucket = bucket
        self.settings = settings
        #: the retry policy; its retry budget is shared by the connections of equal settings
        self.retry = retry if retry.scope is not None else replace(retry, scope=settings)
        self.profiled = profiled
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._executor: WorkerPool | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "settings": self.settings, "retry": self.retry,
                "profiled": self.profiled}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    def __repr__(self) -> str:
        endpoint = redact(self.settings.endpoint) if self.settings.endpoint else None
        return f"S3Connection(bucket={self.bucket!r}, endpoint={endpoint!r})"

    # -- names ---------------------------------------------------------------------------

    def url(self, key: str) -> str:
        """``s3://bucket/key``: how errors and logs name ``key``."""
        return f"s3://{self.bucket}/{key}"

    # -- per-process parts ----------------------------------------------------------------

    @property
    def engine_name(self) -> str:
        """The name of the engine this process uses."""
        return engine_name(self.settings.engine)

    def engine(self) -> Engine:
        """This process's engine (made on first use; see :func:`engine_name`)."""
        name = engine_name(self.settings.engine)
        transport = _transport(self.settings)
        engine = transport.engines.get(name)
        if engine is None:
            with transport.lock:
                engine = transport.engines.get(name)
                if engine is None:
                    module, _, cls = ENGINES[name].partition(":")
                    try:
                        factory = getattr(importlib.import_module(module), cls)
                    except ImportError as exc:
                        raise ImportError(f"the S3 engine {name!r} needs {exc.name}: "
                                          f"pip install 'pfio[{name}]'") from exc
                    engine = transport.engines[name] = factory(self, transport.hooks)
                    logger.debug("S3 engine %s for %s", name, self)
        if self.profiled:
            return ProfiledCalls(engine, PROFILE_PREFIX, PROFILE_NAMES)
        return engine

    def client(self) -> Any:
        """This process's botocore client (the ``boto3`` engine's, and the credential
        chain of both engines; made on first use)."""
        transport = _transport(self.settings)
        if transport.client is None:
            with transport.lock:
                if transport.client is None:
                    transport.client = make_client(self.settings, transport.hooks)
        return transport.client

    def session(self) -> Any:
        """What requests are signed with: an object with boto3's session's
        ``get_credentials()`` and ``region_name``. Read without botocore where the settings
        or the environment tell the answer of its chain (:mod:`pfio.fs.s3.credentials`),
        else the boto3 session of :meth:`client`."""
        known = known_session(self.settings)
        return known if known is not None else self.client()._pfio_session

    def executor(self) -> WorkerPool:
        """This connection's background threads in this process (read-ahead, part
        uploads; see :mod:`pfio.fs.s3.threads`: they keep serving a save that runs in a
        non-daemon thread while the interpreter exits)."""
        if self._pid != os.getpid():  # a forked child: the parent's threads are gone
            self._reset()
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = WorkerPool(
                        max(2, self.settings.max_pool_connections // 2),
                        f"pfio-s3-{self.bucket}")
        return self._executor

    def close(self) -> None:
        """Stop the background threads (they are made again when used)."""
        if self._pid != os.getpid():
            return
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    # -- requests ------------------------------------------------------------------------

    def request(self, method: str, key: str, send: Callable[[Engine], T],
                nbytes: Callable[[Any], int] | None = None) -> T:
        """``send(engine)`` with retries (this process's engine, fetched at each try),
        reported to the tracer as ``method`` on ``key``; errors as builtin exceptions."""
        return call(self.retry, method, self.url(key), lambda: send(self.engine()), nbytes)

    def add_request_hook(self, hook: RequestHook) -> None:
        """Call ``hook(method, path, headers)`` before every request this process sends
        with these settings, whatever the engine (retries included; ``path`` is
        ``/bucket/key``; header names are lower-case)."""
        _transport(self.settings).hooks.append(hook)


__all__ = ["S3Connection", "S3Settings", "Engine", "BodySink", "BodyRest", "RequestHook",
           "engine_name", "requested_engine", "mock_aws_active", "ENGINES"]
