"""``S3Connection``: what the readers and writers of one S3 filesystem talk to.

One connection object holds, per process: the engine that sends every request (GET, HEAD,
listings, PUT, multipart uploads, DELETE, copies, bucket requests), the botocore client
that is the engine's credential chain (and, for the ``boto3`` engine, its client), the pool
of background threads, the retry policy and the URL of a key. It is created lazily in each
process (a forked child, a spawned or forkserver worker all make their own engine), so it
may be pickled with the filesystem and its open readers.

The engines: ``"http"`` (the default: pfio's own HTTP/1.1 client on the standard library's
sockets, :mod:`pfio.fs.s3.http_engine`) and ``"boto3"`` (botocore,
:mod:`pfio.fs.s3.boto3_engine`). One is chosen by
``S3(engine=...)``, else ``$PFIO_S3_ENGINE``, else ``"http"``; ``"boto3"`` is always used
while moto's in-process ``mock_aws`` is active (it intercepts botocore, which the other
engines bypass).

Secrets: with the ``http`` engine botocore sends nothing, so its debug log shows no signed
request. botocore's ``botocore.endpoint`` logger, which prints each request it sends with
its ``Authorization`` and ``X-Amz-Security-Token`` headers, and its ``botocore.auth``
logger, which prints the canonical request it signs, get a
:class:`pfio.trace.redact.RedactingFilter` when pfio makes a botocore client, so the
``boto3`` engine's requests are logged without them (the filter redacts the requests of
every botocore client of the process).
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote, urlsplit

from ...trace.ppe import ProfiledCalls
from ...trace.redact import RedactingFilter, redact
from .credentials import known_session
from .retry import RetryPolicy, call
from .threads import WorkerPool

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: engine name -> ``module:class`` (imported when first used)
ENGINES = {"http": "pfio.fs.s3.http_engine:HttpEngine",
           "boto3": "pfio.fs.s3.boto3_engine:Boto3Engine"}

#: how a profiled connection's requests are recorded in pytorch-pfn-extras' profiler: as
#: PFIO 2.x recorded its botocore calls (``pfio.boto3:get_object``, ``:put_object``, ...)
PROFILE_PREFIX = "pfio.boto3"
PROFILE_NAMES = {"get": "get_object"}

#: ``hook(method, path, headers)``, called before each request is sent (``path`` is
#: ``/bucket/key``, the header names are lower-case)
RequestHook = Callable[[str, str, "dict[str, str]"], None]


class BodySink(Protocol):
    """Where an engine delivers the response of a GET."""

    def begin(self, status: int, headers: dict[str, str]) -> None:
        """The status and the (lower-case) headers of a successful response."""

    def target(self) -> memoryview | None:
        """The buffer the next body bytes may be read straight into, else None."""

    def advance(self, n: int) -> None:
        """``n`` bytes were read into :meth:`target`."""

    def write(self, chunk: Any) -> int:
        """The next piece of the body; returns how many of its bytes were taken (fewer
        once the sink is complete)."""

    def complete(self) -> bool:
        """True once every byte wanted has arrived."""

    def take_rest(self, rest: BodyRest) -> bool:
        """The sink is complete and the body goes on: True when it takes ``rest`` to read
        on (and to close), False to have the engine drop it."""


class BodyRest(Protocol):
    """The unread rest of a response body, still on its connection."""

    #: bytes not read yet
    left: int

    def readinto(self, target: memoryview) -> int:
        """Fill ``target`` with the next bytes (all of them unless the body ends first);
        raises ``ConnectionError`` or ``TimeoutError`` when the connection fails."""

    def close(self) -> None:
        """Drop the rest."""


class Engine(Protocol):
    """The data path of S3: what :mod:`pfio.fs.s3.get` and :mod:`pfio.fs.s3.writer` call.

    An engine is made by ``Engine(connection, hooks)``: it may use the connection's
    settings, botocore client and session (not its bucket: engines are shared by the
    buckets of a process with equal settings) and calls each ``hook(method, path, headers)``
    of ``hooks`` before it sends a request itself. Errors are raised as botocore's
    ``ClientError`` or exceptions with the same ``response`` shape
    (:class:`pfio.fs.s3.errors.ServerError`), or as connection errors;
    :mod:`pfio.fs.s3.retry` retries them and :mod:`pfio.fs.s3.errors` translates them.
    The other requests answer as botocore's methods of the same names do: a dict with
    ``ResponseMetadata`` (``HTTPStatusCode``) and the fields pfio reads (``ETag`` of a
    part, ``UploadId``, ``Errors`` of a batch delete, ``CopyPartResult``).
    """

    #: True when :meth:`get` takes ``rng=""`` (no ``Range`` header: a plain GET of the
    #: whole object) and stops receiving once the sink is complete, handing the rest of a
    #: long body to the sink (``take_rest``) or dropping its connection
    plain_gets: bool
    #: True when :meth:`put_object` and :meth:`upload_part` sign the ``sha256`` they are
    #: given as the body's hash (``x-amz-content-sha256``), which a server may check
    signs_payloads: bool

    def get(self, bucket: str, key: str, rng: str, if_match: str | None,
            sink: BodySink) -> None: ...

    def head_object(self, bucket: str, key: str) -> dict[str, Any]:
        """The HEAD of ``key`` as botocore's ``head_object`` returns it (``ContentLength``,
        ``LastModified``, ``ETag``, ``Metadata``, ...)."""

    def list_objects_v2(self, bucket: str, **kwargs: Any) -> dict[str, Any]:
        """One page of ListObjectsV2, with botocore's arguments (``Prefix``, ``Delimiter``,
        ``MaxKeys``, ``ContinuationToken``) and the fields of its answer pfio reads
        (``Contents``, ``CommonPrefixes``, ``IsTruncated``, ``NextContinuationToken``)."""

    def put_object(self, bucket: str, key: str, body: Any, crc32: str,
                   md5: str | None = None, exclusive: bool = False,
                   sha256: str | None = None) -> dict[str, Any]:
        """A PUT of ``body`` with its checksum ``crc32`` (and ``Content-MD5`` ``md5``, and
        its signed SHA-256 ``sha256``, hex, where :attr:`signs_payloads`); ``exclusive``:
        only if nothing is at ``key`` (``If-None-Match: *``)."""

    def create_multipart_upload(self, bucket: str, key: str,
                                checksum: str | None = "CRC32") -> dict[str, Any]:
        """A new multipart upload (``UploadId``) whose parts carry the ``checksum``
        algorithm's checksums (None: none, as for copies)."""

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int, body: Any,
                    crc32: str, md5: str | None = None,
                    sha256: str | None = None) -> dict[str, Any]:
        """Part ``number`` of an upload, its checksums as for :meth:`put_object`."""

    def complete_multipart_upload(self, bucket: str, key: str, upload_id: str,
                                  parts: list[dict[str, Any]],
                                  exclusive: bool = False) -> dict[str, Any]: ...

    def list_multipart_uploads(self, bucket: str, prefix: str, key_marker: str = "",
                               upload_id_marker: str = "") -> dict[str, Any]:
        """One page of the uploads in progress of keys under ``prefix``, after the markers
        (``Uploads``: ``Key``, ``UploadId``, ``Initiated``; ``IsTruncated``, and then
        ``NextKeyMarker`` and ``NextUploadIdMarker``)."""

    def abort_multipart_upload(self, bucket: str, key: str, upload_id: str) -> dict[str, Any]:
        ...

    def delete_object(self, bucket: str, key: str) -> dict[str, Any]: ...

    def delete_objects(self, bucket: str, keys: list[str]) -> dict[str, Any]:
        """A quiet DeleteObjects of ``keys`` (at most 1,000): ``Errors`` lists the keys not
        deleted (``Key``, ``Code``, ``Message``)."""

    def copy_object(self, bucket: str, key: str, source_bucket: str,
                    source_key: str) -> dict[str, Any]:
        """A server-side copy of ``source_key`` (up to 5 GiB) to ``key``."""

    def upload_part_copy(self, bucket: str, key: str, upload_id: str, number: int,
                         source_bucket: str, source_key: str, rng: str) -> dict[str, Any]:
        """Part ``number`` of an upload copied from the byte range ``rng``
        (``bytes=first-last``) of ``source_key``; ``CopyPartResult["ETag"]``."""

    def head_bucket(self, bucket: str) -> dict[str, Any]: ...

    def create_bucket(self, bucket: str) -> dict[str, Any]:
        """Create ``bucket`` in the region of the engine's session."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class S3Settings:
    """How to reach S3 (hashable: connections are shared by equal settings)."""

    endpoint: str | None = None
    region: str | None = None
    profile: str | None = None
    aws_access_key_id: str | None = field(default=None, repr=False)
    aws_secret_access_key: str | None = field(default=None, repr=False)
    aws_session_token: str | None = field(default=None, repr=False)
    connect_timeout: float = 5
    read_timeout: float = 10
    #: the slowest transfer a request may keep up, in bytes/s (None: the engine's default)
    min_rate: float | None = None
    max_pool_connections: int = 32
    addressing_style: str | None = None
    engine: str | None = None
    #: how a body's integrity is checked by a server that does not echo its CRC32 (see
    #: :mod:`pfio.fs.s3.integrity`): ``"auto"``, ``"md5"`` or ``"sha256"``
    write_digest: str = "auto"

    def secrets(self) -> dict[str, str | None]:
        return {"aws_access_key_id": self.aws_access_key_id,
                "aws_secret_access_key": self.aws_secret_access_key,
                "aws_session_token": self.aws_session_token}

    def path_style(self) -> bool:
        """Path-style addressing (``endpoint/bucket/key``): the default with an endpoint."""
        if self.addressing_style in ("path", "virtual"):
            return self.addressing_style == "path"
        return self.endpoint is not None


def mock_aws_active() -> bool:
    """True while moto's in-process ``mock_aws`` intercepts botocore."""
    models = sys.modules.get("moto.core.models")
    stubber = getattr(models, "botocore_stubber", None)
    return bool(getattr(stubber, "enabled", False))


#: the values of ``S3(write_digest=...)`` and ``$PFIO_S3_WRITE_DIGEST``
WRITE_DIGESTS = ("auto", "md5", "sha256")


def requested_write_digest(requested: str | None) -> str:
    """``requested``, else ``$PFIO_S3_WRITE_DIGEST``, else ``"auto"``, checked.

    Raises:
        ValueError: an unknown value.
    """
    name = requested or os.environ.get("PFIO_S3_WRITE_DIGEST") or "auto"
    if name not in WRITE_DIGESTS:
        raise ValueError(f"unknown S3 write digest {name!r}; known: "
                         f"{', '.join(WRITE_DIGESTS)}")
    return name


def requested_engine(requested: str | None) -> str | None:
    """``requested``, else ``$PFIO_S3_ENGINE``, else None (the default), checked.

    Raises:
        ValueError: an unknown engine name.
    """
    name = requested or os.environ.get("PFIO_S3_ENGINE") or None
    if name is not None and name not in ENGINES:
        raise ValueError(f"unknown S3 engine {name!r}; known: {', '.join(sorted(ENGINES))}")
    return name


#: the engine used unless one is asked for
DEFAULT_ENGINE = "http"


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
        """This process's botocore client (DELETE, copies, buckets; made on first
        use)."""
        transport = _transport(self.settings)
        if transport.client is None:
            with transport.lock:
                if transport.client is None:
                    client = _make_client(self.settings)
                    client.meta.events.register(
                        "before-send.s3", functools.partial(_before_send, transport))
                    transport.client = client
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

    def call(self, method: str, key: str, operation: str, **kwargs: Any) -> Any:
        """One botocore call on the bucket, with retries, errors as builtin exceptions
        (pfio itself sends every request through the engine: see :meth:`request`)."""
        client = self.client()
        return call(self.retry, method, self.url(key),
                    lambda: getattr(client, operation)(Bucket=self.bucket, **kwargs))

    def add_request_hook(self, hook: RequestHook) -> None:
        """Call ``hook(method, path, headers)`` before every request this process sends
        with these settings, whatever the engine (retries included; ``path`` is
        ``/bucket/key``; header names are lower-case)."""
        _transport(self.settings).hooks.append(hook)


def _before_send(transport: _Transport, request: Any, **_: Any) -> None:
    """botocore's ``before-send`` event: the request hooks."""
    if not transport.hooks:
        return
    parts = urlsplit(request.url)
    path = unquote(parts.path)
    if not transport.settings.path_style():
        path = "/" + parts.hostname.split(".", 1)[0] + path
    headers = {name.lower(): value.decode() if isinstance(value, bytes) else value
               for name, value in request.headers.items()}
    for hook in transport.hooks:
        hook(request.method, path, headers)


def _make_client(settings: S3Settings) -> Any:
    import boto3
    import botocore.session
    from botocore.config import Config

    core = botocore.session.get_session()
    secrets = settings.secrets()
    if any(secrets.values()) or secrets["aws_access_key_id"] is not None and \
            secrets["aws_secret_access_key"] is not None:
        # what is given signs the requests, empty keys too (moto servers take any), as a
        # botocore client made with them does; boto3's Session would ignore empty ones
        core.set_credentials(secrets["aws_access_key_id"], secrets["aws_secret_access_key"],
                             secrets["aws_session_token"])
    session = boto3.session.Session(botocore_session=core, profile_name=settings.profile,
                                    region_name=settings.region)
    config = Config(
        connect_timeout=settings.connect_timeout, read_timeout=settings.read_timeout,
        retries={"total_max_attempts": 1},  # pfio.fs.s3.errors retries, resuming bodies
        max_pool_connections=settings.max_pool_connections,
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        s3={"addressing_style": "path" if settings.path_style() else "virtual"},
    )
    client = session.client("s3", endpoint_url=settings.endpoint, config=config)
    client._pfio_session = session
    _redact_botocore_requests()
    return client


def _redact_botocore_requests() -> None:
    """Put a :class:`RedactingFilter` on the loggers botocore logs its requests on (with
    their signing headers: ``botocore.endpoint``) and what it signs (the canonical request,
    session token included: ``botocore.auth``), once each."""
    for name in ("botocore.endpoint", "botocore.auth"):
        log = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in log.filters):
            log.addFilter(RedactingFilter())


__all__ = ["S3Connection", "S3Settings", "Engine", "BodySink", "BodyRest", "engine_name",
           "requested_engine",
           "mock_aws_active", "ENGINES"]
