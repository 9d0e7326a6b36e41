"""One SparkSession for the Spark tests: ``local[2,2]`` (two threads; a failed task is tried
twice, as on a cluster), no UI, bound to 127.0.0.1, two shuffle partitions, the ``pfio``
format registered. Spark's Python workers get the test S3 server's endpoint and credentials
through ``spark.executorEnv.*`` (they inherit the JVM's environment, fixed when it starts,
not the test's ``monkeypatch``), so ``s3://`` works in tasks as on the driver with
``s3_env``. Needs Java 17 (``scripts/ensure-java.sh``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator

import pytest

pyspark = pytest.importorskip("pyspark")

pytestmark = pytest.mark.spark


@pytest.fixture(scope="session")
def spark(moto_server) -> Iterator[object]:
    """The session (stopped at the end of the test session)."""
    if shutil.which("java") is None:
        pytest.skip("no java: run scripts/ensure-java.sh")
    from pyspark.sql import SparkSession

    from pfio.integrations.spark import register

    env = {**moto_server.credentials, "S3_ENDPOINT": moto_server.endpoint}
    builder = (SparkSession.builder.master("local[2,2]").appName("pfio-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC"))
    for name, value in env.items():
        builder = builder.config(f"spark.executorEnv.{name}", value)
    with pytest.MonkeyPatch.context() as patch:
        # Spark's Python workers (tasks, and the planning of Python data sources) run
        # this interpreter, which has pfio and pyarrow
        patch.setenv("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.pyspark.python", sys.executable)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        register(session)
        yield session
        session.stop()
