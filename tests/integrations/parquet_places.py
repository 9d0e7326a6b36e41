"""Where the Parquet tests write their datasets: mem://, a local directory or S3 (the moto
server of tests/conftest.py)."""

import pytest

PLACES = ["mem", "local", "s3"]


def dataset_url(request: pytest.FixtureRequest, tmp_path, label: str) -> str:
    """A fresh dataset URL on the place ``request.param`` names."""
    if request.param == "mem":
        return f"mem://{label}-{request.node.name}/ds"
    if request.param == "local":
        return str(tmp_path / "ds")
    request.getfixturevalue("s3_env")
    return f"s3://{request.getfixturevalue('s3_bucket')}/ds"
