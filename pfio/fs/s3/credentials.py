"""The credentials and region of botocore's chain, read without botocore where that is exact.

pfio's ``http`` engine signs its requests itself and asks botocore only for credentials and
a region. Importing boto3 and making its session costs about 0.3 s of CPU in every process
that opens S3, which is every DataLoader worker of every epoch (workers are new processes
unless ``persistent_workers``). When the answer of botocore's chain is already known, this
module gives it without botocore:

* keys given to ``S3(aws_access_key_id=..., aws_secret_access_key=...)``: a client's own
  arguments come first in botocore's chain;
* else, unless ``S3(profile=...)`` names a profile, ``AWS_ACCESS_KEY_ID`` and
  ``AWS_SECRET_ACCESS_KEY`` (with ``AWS_SECURITY_TOKEN`` or ``AWS_SESSION_TOKEN``) in the
  environment: botocore's first provider, which it also uses when ``AWS_PROFILE`` is set.

The region is ``S3(region=...)``, else ``AWS_DEFAULT_REGION`` (the variable botocore reads),
else none when there is no AWS config file that could name one. Anything else (profiles,
credentials files, SSO, containers, instance metadata, expiring environment credentials,
half-set variables, a config file without a region in the environment) goes to botocore.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

_TOKENS = ("AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN")  # botocore's order


@dataclass(frozen=True)
class FixedCredentials:
    """Keys that do not change for the life of the process (botocore's names)."""

    access_key: str
    secret_key: str
    token: str | None

    def get_frozen_credentials(self) -> FixedCredentials:
        return self


@dataclass(frozen=True)
class KnownSession:
    """What the ``http`` engine asks of a boto3 session, known without botocore."""

    credentials: FixedCredentials
    region_name: str | None

    def get_credentials(self) -> FixedCredentials:
        return self.credentials


def known_session(settings: Any, environ: dict[str, str] | os._Environ[str] = os.environ
                  ) -> KnownSession | None:
    """The session botocore's chain would give for ``settings`` (an ``S3Settings``), or
    None when only botocore can tell."""
    credentials = _credentials(settings, environ)
    if credentials is None:
        return None
    region = settings.region or environ.get("AWS_DEFAULT_REGION") or None
    if region is None and _config_file_exists(environ):
        return None  # the profile's section may name one
    return KnownSession(credentials, region)


def _credentials(settings: Any, environ: dict[str, str] | os._Environ[str]
                 ) -> FixedCredentials | None:
    if settings.aws_access_key_id is not None and settings.aws_secret_access_key is not None:
        return FixedCredentials(settings.aws_access_key_id, settings.aws_secret_access_key,
                                settings.aws_session_token)
    if any(value is not None for value in settings.secrets().values()) or settings.profile:
        return None
    access_key = environ.get("AWS_ACCESS_KEY_ID", "")
    secret_key = environ.get("AWS_SECRET_ACCESS_KEY", "")
    if not access_key or not secret_key or environ.get("AWS_CREDENTIAL_EXPIRATION"):
        return None
    token = next((environ[name] for name in _TOKENS if name in environ), None)
    return FixedCredentials(access_key, secret_key, token)


def _config_file_exists(environ: dict[str, str] | os._Environ[str]) -> bool:
    path = environ.get("AWS_CONFIG_FILE") or os.path.join("~", ".aws", "config")
    return os.path.exists(os.path.expanduser(path))
