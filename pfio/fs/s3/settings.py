"""How to reach S3, without IO: :class:`S3Settings` (one per set of options: connections
are shared by equal settings), and the options read from the environment, checked: the
engine (``S3(engine=...)``, else ``$PFIO_S3_ENGINE``) and the write digest
(``S3(write_digest=...)``, else ``$PFIO_S3_WRITE_DIGEST``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

#: engine name -> ``module:class`` (imported when first used)
ENGINES = {"http": "pfio.fs.s3.http_engine:HttpEngine",
           "boto3": "pfio.fs.s3.boto3_engine:Boto3Engine"}
#: the engine used unless one is asked for
DEFAULT_ENGINE = "http"


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


__all__ = ["DEFAULT_ENGINE", "ENGINES", "S3Settings", "WRITE_DIGESTS", "requested_engine",
           "requested_write_digest"]
