"""``S3``: a filesystem over an S3 bucket (AWS, MinIO, Ceph RGW, moto, ...).

``from_url("s3://bucket/prefix")`` roots a filesystem at ``prefix`` in ``bucket``. Objects
are files; "directories" are key prefixes ending in ``/`` (``mkdir`` and ``makedirs`` are
no-ops, as in PFIO 2.x). Opening a file for reading sends its first ranged GET at once,
so a missing object raises ``FileNotFoundError`` from ``open`` and an object up to 1 MiB is
read whole by that one request (no HEAD); see :mod:`pfio.fs.s3.reader`. Writes are
all-or-nothing (single PUT or multipart upload, :mod:`pfio.fs.s3.writer`); errors are in
:mod:`pfio.fs.s3.errors`, retries in :mod:`pfio.fs.s3.retry`.

Requests go through the filesystem's :class:`pfio.fs.s3.connection.S3Connection`, which
makes its engine (pfio's own HTTP client by default, see :mod:`pfio.fs.s3.connection`) on
first use in each process, so an ``S3`` object may be pickled to DataLoader workers (fork,
spawn or forkserver) and shared by threads.

Credentials never appear in ``repr``, logs or error messages. An endpoint URL with a user
name or password in it (``http://user:pass@host``) is refused with a ``ValueError`` (which
does not repeat them): S3 takes credentials from the options, a profile or the environment,
and a password in a URL would travel into every log line and error that names the endpoint.
"""

from __future__ import annotations

import errno
import io
import os
import posixpath
from collections.abc import Callable
from dataclasses import replace
from typing import IO, Any, TypeVar
from urllib.parse import urlsplit

from ..._uri import URI, join_confined
from ...digests import sha256_hex
from ...trace.ppe import is_profiled
from ...trace.redact import redact
from ..base import FS, warn_unknown_options
from ..file_types import as_binary_io
from ..modes import Mode
from ..stat import FileStat
from ..writers import atomic_writer
from .connection import S3Connection
from .engine import Engine, Head, ListPage
from .errors import BucketExists
from .faces import reader_face
from .operations import S3Operations
from .reader import ReadOptions, S3Reader
from .retry import RetryPolicy
from .settings import S3Settings, requested_engine, requested_write_digest
from .stat import S3ObjectStat, S3PrefixStat
from .writer import S3Sink

DEFAULT_MPU_CHUNKSIZE = 8 << 20

T = TypeVar("T")


#: seconds to connect, and to wait for the next bytes of an answer (None means these)
CONNECT_TIMEOUT, READ_TIMEOUT = 5.0, 10.0


class S3(S3Operations, FS):
    """The objects of ``bucket`` under ``prefix``, as a filesystem.

    Args:
        bucket: the bucket name.
        prefix: the key prefix this filesystem is rooted at ("" for the whole bucket).
        endpoint: the S3 endpoint URL; default: ``$S3_ENDPOINT``, else
            ``$AWS_ENDPOINT_URL``, else AWS.
        aws_access_key_id, aws_secret_access_key, session_token, profile, region:
            credentials and region; by default boto3's normal chain (environment, config
            files, instance roles) finds them. Environment variables in the key id and
            the secret (``$NAME``, ``${NAME}``) are expanded, as PFIO 2.x did.
        mpu_chunksize: writes up to this size are one PUT; larger ones are multipart
            uploads with 8 parts of this size, then parts of twice this size (fewer parts
            for a large object: each costs the server work of its own).
        mpu_concurrency: ``mpu_chunksize`` chunks of one upload in flight at once (a part
            of two counts twice); a writer holds at most ``mpu_concurrency`` chunks and two
            parts being filled and handed over.
        buffering: the block size of reads (read-ahead blocks; default 16 MiB). As in
            PFIO 2.x, ``open(path, "rb")`` returns an ``io.BufferedReader``, and with
            ``buffering=0`` (here or in ``open``) a raw file: both read through one
            :class:`~pfio.fs.s3.reader.S3Reader` (see :mod:`pfio.fs.s3.faces`).
        readahead: how many blocks sequential reads fetch ahead (0 turns read-ahead off).
        connect_timeout, read_timeout: seconds, for each HTTP request (an endpoint that
            never answers fails within about ``3 * read_timeout``, at most 30 s); None
            (PFIO 2.x's "botocore's default") gives pfio's defaults, 5 and 10 s. Over
            ``https`` the TLS handshake is bounded by ``connect_timeout`` too.
        min_rate: the slowest a request may send or receive, in bytes/s, measured over each
            ``read_timeout`` seconds of waiting (default 4096; 0: no floor), so a server that
            trickles bytes cannot hold a read for ever; the head of an answer must arrive
            within about ``read_timeout``.
        engine: ``"http"`` (pfio's own HTTP/1.1 client, the default) or ``"boto3"``;
            default ``$PFIO_S3_ENGINE``.
            ``"boto3"`` is used while moto's ``mock_aws`` is active.
        addressing_style: ``"path"`` (the default with an ``endpoint``) or ``"virtual"``
            (``bucket.host``, the default on AWS).
        write_digest: what proves to a server that does not echo the CRC32 of a PUT or
            part that the body arrived intact: ``"auto"`` (the default): the body's SHA-256,
            signed, where the endpoint is known to check it (AWS; others once the first
            multipart upload has probed them), else its ``Content-MD5``; ``"md5"``: always
            ``Content-MD5``; ``"sha256"``: always the signed SHA-256 (cheaper for the
            client; only for a server that checks it). Default ``$PFIO_S3_WRITE_DIGEST``.
            See :mod:`pfio.fs.s3.integrity`.
        max_attempts: tries of one request in all, throttled or not. Default (None): 5
            for server errors and broken connections, 10 while the server throttles
            (backing off from 1 s up to 20 s per sleep); see :mod:`pfio.fs.s3.retry`.
        retry: the whole retry policy (a :class:`pfio.fs.s3.retry.RetryPolicy`: backoff,
            attempts, ``Retry-After`` cap, deadlines, retry budget); ``max_attempts``
            overrides its attempts, ``read_timeout`` its ``attempt_timeout``.
        max_pool_connections: HTTP connections kept per process (and background threads).
        create_bucket: create the bucket when it does not exist (HeadBucket, then
            CreateBucket in the session's region).
        create: accepted for PFIO 2.x (prefixes need no creating).

    PFIO 2.x's attributes are kept: ``bucket``, ``cwd`` (the prefix as given),
    ``endpoint``, ``connect_timeout``, ``read_timeout``, ``botocore_config``, ``kwargs``,
    ``aws_access_key_id``, ``aws_secret_access_key``, ``mpu_chunksize``, ``buffering``,
    ``create_bucket``, ``hostname`` and ``client`` (this process's botocore client, made on
    first use). Made with ``trace=True``, the filesystem also records each request in
    pytorch-pfn-extras' profiler, as PFIO 2.x recorded its botocore calls
    (``pfio.boto3:get_object``, ``pfio.boto3:put_object``, ...).

    ``open(path, "rb", first_fetch=N)`` sets how many bytes the request that opens the file
    reads (default 1 MiB): the first ``N``, or with a negative ``N`` the last ``-N`` (for
    formats whose index is at the end, such as zip and Parquet: reading it then costs no
    second request). ``open(path, "rb", sequential=True)`` says the file is read once from
    start to end (a shard, a log): the reader stays on the opening GET's body to the end
    however slowly it moves, so the whole object costs one request (by default a stream
    slower than ``ReadOptions.stream_min_rate`` gives way to parallel ranged reads, which a
    distant server serves faster). Other filesystems ignore both options.
    """

    scheme = "s3"
    # a prefix exists through the keys under it (``mkdir`` makes nothing), and a recursive
    # listing names the keys, as PFIO 2.x's did
    implicit_directories = True
    list_implied_directories = False

    def __init__(self, bucket: str, prefix: str | None = "", endpoint: str | None = None,
                 aws_access_key_id: str | None = None,
                 aws_secret_access_key: str | None = None, session_token: str | None = None,
                 region: str | None = None, profile: str | None = None,
                 mpu_chunksize: int = DEFAULT_MPU_CHUNKSIZE, mpu_concurrency: int = 8,
                 buffering: int = -1,
                 readahead: int = 3, connect_timeout: float | None = CONNECT_TIMEOUT,
                 read_timeout: float | None = READ_TIMEOUT, min_rate: float | None = None,
                 max_attempts: int | None = None, max_pool_connections: int = 32,
                 engine: str | None = None, addressing_style: str | None = None,
                 create_bucket: bool = False, create: bool = False,
                 retry: RetryPolicy | None = None, write_digest: str | None = None,
                 **options: Any) -> None:
        super().__init__()
        warn_unknown_options("S3", options)
        if not bucket:
            raise ValueError("S3 needs a bucket name")
        self.bucket = bucket
        self.root = (prefix or "").strip("/")
        self._given_prefix = prefix or ""
        self.create_bucket = create_bucket
        self.buffering = buffering
        if aws_access_key_id is not None:
            aws_access_key_id = os.path.expandvars(aws_access_key_id)
        if aws_secret_access_key is not None:
            aws_secret_access_key = os.path.expandvars(aws_secret_access_key)
        self.endpoint = _checked_endpoint(endpoint or os.environ.get("S3_ENDPOINT") or
                                          os.environ.get("AWS_ENDPOINT_URL") or None)
        self.region = region
        self.profile = profile
        self.mpu_chunksize = mpu_chunksize
        self.mpu_concurrency = max(1, mpu_concurrency)
        block = buffering if buffering > 1 else ReadOptions.block_size
        self.read_options = ReadOptions(block_size=block, readahead=max(0, readahead))
        self.connect_timeout = connect_timeout = \
            CONNECT_TIMEOUT if connect_timeout is None else float(connect_timeout)
        self.read_timeout = read_timeout = \
            READ_TIMEOUT if read_timeout is None else float(read_timeout)
        self.max_pool_connections = max_pool_connections
        settings = S3Settings(
            endpoint=self.endpoint, region=region, profile=profile,
            aws_access_key_id=aws_access_key_id, aws_secret_access_key=aws_secret_access_key,
            aws_session_token=session_token, connect_timeout=connect_timeout,
            read_timeout=read_timeout, min_rate=min_rate,
            max_pool_connections=max_pool_connections, addressing_style=addressing_style,
            engine=requested_engine(engine),
            write_digest=requested_write_digest(write_digest))
        policy = replace(retry or RetryPolicy(), attempt_timeout=read_timeout,
                         scope=settings)
        if max_attempts is not None:
            tries = max(1, int(max_attempts))
            policy = replace(policy, max_attempts=tries, throttle_attempts=tries)
        #: the retry policy (the connection's: changing it changes how requests retry)
        self._retry = policy
        self._connection = S3Connection(bucket, settings, policy, profiled=is_profiled(self))
        if create_bucket:
            self._create_bucket()

    @classmethod
    def from_uri(cls, uri: URI, **options: Any) -> S3:
        """The filesystem of ``s3://bucket/prefix``."""
        return cls(uri.netloc, uri.path, **options)

    def __repr__(self) -> str:
        endpoint = redact(self.endpoint) if self.endpoint else None
        return f"S3(bucket={self.bucket!r}, prefix={self.root!r}, endpoint={endpoint!r})"

    @property
    def connection(self) -> S3Connection:
        """The transport of this filesystem (engine, botocore client, threads, retries)."""
        return self._connection

    @property
    def engine(self) -> str:
        """The name of the engine this process moves data with (``"http"``,
        ``"boto3"``)."""
        return self._connection.engine_name

    # -- PFIO 2.x's attributes -------------------------------------------------------------

    @property
    def cwd(self) -> str:
        """The prefix this filesystem is rooted at, as it was given (``from_url`` gives
        ``"/prefix"``, as in PFIO 2.x); a view made by :meth:`subfs` names its own root."""
        given = self._given_prefix
        return given if given.strip("/") == self.root else self.root

    @property
    def aws_access_key_id(self) -> str | None:
        """The access key id given (None: boto3's chain finds one)."""
        return self._connection.settings.aws_access_key_id

    @property
    def aws_secret_access_key(self) -> str | None:
        """The secret access key given (None: boto3's chain finds one). Never in a repr,
        an error or a log line."""
        return self._connection.settings.aws_secret_access_key

    @property
    def kwargs(self) -> dict[str, str]:
        """What PFIO 2.x passed to ``boto3.client``: ``aws_access_key_id``,
        ``aws_secret_access_key`` and ``endpoint_url``, those that are set."""
        given = {"aws_access_key_id": self.aws_access_key_id,
                 "aws_secret_access_key": self.aws_secret_access_key,
                 "endpoint_url": self.endpoint}
        return {name: value for name, value in given.items() if value is not None}

    @property
    def botocore_config(self) -> dict[str, float]:
        """The timeouts of this filesystem's requests, as the arguments of
        ``botocore.config.Config`` (PFIO 2.x's attribute)."""
        return {"connect_timeout": self.connect_timeout, "read_timeout": self.read_timeout}

    @property
    def hostname(self) -> str:
        """The endpoint's host name (``"undefined"`` without an endpoint, as in PFIO 2.x)."""
        if self.endpoint is None:
            return "undefined"
        return urlsplit(self.endpoint if "//" in self.endpoint
                        else f"http://{self.endpoint}").hostname or "undefined"

    @property
    def client(self) -> Any:
        """This process's botocore S3 client (made on first use; pfio's own requests go
        through its engine)."""
        return self._connection.client()

    def close(self) -> None:
        """Stop this filesystem's background threads (they are recreated if it is used
        again)."""
        self._connection.close()

    # -- names ---------------------------------------------------------------------------

    def identity(self, path: str) -> str:
        """The object's URL, the endpoint, and who reads it: a digest of the access key id,
        profile and region in use (explicit, else from the environment), so that two
        readers with different credentials never share a cache entry. No secret is in it."""
        key_id = self._connection.settings.aws_access_key_id or \
            os.environ.get("AWS_ACCESS_KEY_ID")
        profile = self.profile or os.environ.get("AWS_PROFILE") or \
            os.environ.get("AWS_DEFAULT_PROFILE")
        region = self.region or os.environ.get("AWS_REGION") or \
            os.environ.get("AWS_DEFAULT_REGION")
        reader = sha256_hex(repr((key_id, profile, region)).encode())[:32]
        return f"{self._describe(path)}|endpoint={self.endpoint or ''}|reader={reader}"

    def _key(self, path: str) -> str:
        path = os.fspath(path)
        joined = join_confined(self.root, path, self._shown_root)
        trailing = joined.endswith("/")
        key = posixpath.normpath("/" + joined).lstrip("/") if joined else ""
        return key + "/" if trailing and key else key

    def _url(self, key: str) -> str:
        return self._connection.url(key)

    def _describe(self, path: str) -> str:
        return self._url(self._key(path))

    def _request(self, method: str, key: str, send: Callable[[Engine], T]) -> T:
        """``send(engine)`` with retries, errors as builtin exceptions (see
        :meth:`S3Connection.request`)."""
        return self._connection.request(method, key, send)

    # -- files ---------------------------------------------------------------------------

    def _open_binary(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        key = self._key(path)
        if mode.plus or mode.kind == "a":
            raise io.UnsupportedOperation(
                f"S3 objects cannot be opened in mode {mode.binary_mode!r}: {self._url(key)}")
        if not key or key.endswith("/"):
            raise IsADirectoryError(errno.EISDIR, "is a directory", self._url(key))
        if mode.kind == "r":
            options = self.read_options
            if buffering > 1:
                options = replace(options, block_size=buffering)
            if kwargs.get("first_fetch") is not None:
                options = replace(options, first_fetch=int(kwargs["first_fetch"]))
            if kwargs.get("sequential"):
                options = replace(options, stream_min_rate=0)
            try:
                reader = S3Reader(self._connection, key, options)
            except FileNotFoundError:
                if self.isdir(path):
                    raise IsADirectoryError(errno.EISDIR, "is a directory",
                                            self._url(key)) from None
                raise
            return as_binary_io(reader_face(reader, self.buffering if buffering == -1
                                            else buffering))
        exclusive = mode.kind == "x"
        if exclusive and self._head(key) is not None:  # (fails early; the write checks)
            raise FileExistsError(errno.EEXIST, "file exists", self._url(key))
        sink = S3Sink(self._connection, key, self.mpu_chunksize, self.mpu_concurrency,
                      exclusive)
        return atomic_writer(sink, mode, buffering, encoding, errors, newline,
                             buffer_size=1 << 20, keeping=True)

    def _open(self, path: str, mode: Mode, buffering: int, encoding: str | None,
              errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        f = super()._open(path, mode, buffering, encoding, errors, newline, **kwargs)
        chosen = self.buffering if buffering == -1 else buffering
        if mode.kind == "r" and isinstance(f, io.TextIOWrapper) and chosen != 0:
            # text is decoded in chunks of the object's size up to a block (or of
            # ``buffering``), as PFIO 2.x set TextIOWrapper's ``_CHUNK_SIZE``
            block = self.read_options.block_size
            size = getattr(f.buffer, "size", block)
            chunk = chosen if chosen > 1 else min(size, block) or block
            # (a CPython attribute typeshed does not declare)
            f._CHUNK_SIZE = chunk  # type: ignore[attr-defined]
        return f

    # -- directories: none on S3 -----------------------------------------------------------

    def mkdir(self, path: str, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        """A no-op: prefixes exist as soon as an object is under them (PFIO 2.x); a name
        that climbs out of the root raises :class:`PermissionError`, as everywhere."""
        self._key(path)

    def makedirs(self, path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        """A no-op, as :meth:`mkdir`."""
        self._key(path)

    def _create_bucket(self) -> None:
        bucket = self.bucket
        try:
            self._request("HEAD", "", lambda engine: engine.head_bucket(bucket))
        except FileNotFoundError:
            try:
                self._request("PUT", "", lambda engine: engine.create_bucket(bucket))
            except OSError as exc:  # made by another process meanwhile: as good
                if not isinstance(exc.__cause__, BucketExists):
                    raise

    def stat(self, path: str) -> FileStat:
        """The object at ``path``, else the prefix ``path/`` as a directory."""
        key = self._key(path)
        if key and not key.endswith("/"):
            head = self._head(key)
            if head is not None:
                return S3ObjectStat(path, head)
        if self._prefix_exists(key):
            return S3PrefixStat(path.rstrip("/"))
        raise FileNotFoundError(errno.ENOENT, "no such object or prefix", self._url(key))

    def isdir(self, path: str) -> bool:
        try:
            return self._prefix_exists(self._key(path))
        except FileNotFoundError:  # no bucket
            return False

    def exists(self, path: str) -> bool:
        key = self._key(path)
        if key and not key.endswith("/") and self._head(key) is not None:
            return True
        return self.isdir(path)

    def _list_page(self, key: str, prefix: str, delimiter: str | None = None,
                   max_keys: int | None = None, token: str | None = None) -> ListPage:
        """One page of ListObjectsV2 (see :meth:`pfio.fs.s3.engine.Engine.list_objects_v2`);
        ``key`` names it in errors."""
        bucket = self.bucket
        return self._request("LIST", key, lambda engine: engine.list_objects_v2(
            bucket, prefix, delimiter, max_keys, token))

    def _head(self, key: str) -> Head | None:
        """The HEAD of object ``key``, None when there is none."""
        bucket = self.bucket
        try:
            return self._request("HEAD", key, lambda engine: engine.head_object(bucket, key))
        except FileNotFoundError:
            return None


def _checked_endpoint(endpoint: str | None) -> str | None:
    """``endpoint``, refused when it has a user name or password in it.

    Raises:
        ValueError: it has (the message names the endpoint without them).
    """
    if endpoint is None:
        return None
    parts = urlsplit(endpoint)
    if "@" in parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        raise ValueError(
            f"the S3 endpoint {parts.scheme}://<redacted>@{host} has a user name or "
            "password in it: S3 takes credentials from aws_access_key_id= and "
            "aws_secret_access_key= (or a profile, or the environment), not from the URL")
    return endpoint


__all__ = ["S3"]
