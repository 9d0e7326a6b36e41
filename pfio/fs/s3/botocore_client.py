"""The botocore client of a set of S3 settings: made with pfio's options (botocore's
retries off, checksums when required, the addressing style), the request hooks on its
``before-send`` event, and its request logs redacted; and whether moto's in-process
``mock_aws`` intercepts botocore (then the ``boto3`` engine is the one used).

Secrets: botocore's ``botocore.endpoint`` logger, which prints each request it sends with
its ``Authorization`` and ``X-Amz-Security-Token`` headers, and its ``botocore.auth``
logger, which prints the canonical request it signs, get a
:class:`pfio.trace.redact.RedactingFilter` when pfio makes a botocore client, so the
``boto3`` engine's requests are logged without them (the filter redacts the requests of
every botocore client of the process). The ``http`` engine sends nothing through
botocore.
"""

from __future__ import annotations

import functools
import logging
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ...trace.redact import RedactingFilter

if TYPE_CHECKING:
    from .engine import RequestHook
    from .settings import S3Settings


def mock_aws_active() -> bool:
    """True while moto's in-process ``mock_aws`` intercepts botocore."""
    models = sys.modules.get("moto.core.models")
    stubber = getattr(models, "botocore_stubber", None)
    return bool(getattr(stubber, "enabled", False))


def _before_send(settings: S3Settings, hooks: list[RequestHook], request: Any,
                 **_: Any) -> None:
    """botocore's ``before-send`` event: the request ``hooks``."""
    if not hooks:
        return
    parts = urlsplit(request.url)
    path = unquote(parts.path)
    if not settings.path_style():
        path = "/" + parts.hostname.split(".", 1)[0] + path
    headers = {name.lower(): value.decode() if isinstance(value, bytes) else value
               for name, value in request.headers.items()}
    for hook in hooks:
        hook(request.method, path, headers)


def make_client(settings: S3Settings, hooks: list[RequestHook]) -> Any:
    """A botocore S3 client for ``settings`` (its own retries off: pfio retries), which
    calls the request ``hooks`` before it sends each request; its boto3 session (the
    credential chain) is its ``_pfio_session``. botocore's request logs are redacted from
    then on."""
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
    client.meta.events.register("before-send.s3",
                                functools.partial(_before_send, settings, hooks))
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
