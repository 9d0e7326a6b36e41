"""Fixtures of the fsspec bridge's tests (a module may define its own ``s3``)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def bridge() -> Any:
    """A ``PfioFileSystem`` of its own (not fsspec's cached instance)."""
    pytest.importorskip("fsspec")
    from pfio.integrations.fsspec import PfioFileSystem

    return PfioFileSystem(skip_instance_cache=True)


@pytest.fixture
def s3(s3_env: str, s3_bucket: str) -> str:
    """A fresh bucket, as an fsspec path."""
    return f"pfio://s3/{s3_bucket}"
