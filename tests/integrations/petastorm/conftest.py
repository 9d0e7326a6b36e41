"""Datasets written by the real Petastorm 0.13.1, and what Petastorm itself reads from them.

``.venv-petastorm`` (made by ``scripts/petastorm-venv.sh``) holds Petastorm, pyspark,
pyarrow 10 and NumPy 1, which cannot live in pfio's ``.venv``. One session fixture runs
``petastorm_writer.py`` there twice: ``write`` (one Spark ``local[1]`` launch writes every
dataset) and ``read`` (Petastorm's own readers dump what they see), so the tests compare
pfio's output with Petastorm's. Without ``.venv-petastorm`` the tests are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
PETASTORM_PYTHON = ROOT / ".venv-petastorm" / "bin" / "python"
WRITER = Path(__file__).with_name("petastorm_writer.py")


def _run(mode: str, out: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    done = subprocess.run([str(PETASTORM_PYTHON), "-W", "ignore", str(WRITER), mode, str(out)],
                          capture_output=True, text=True, env=env, cwd=out, timeout=240,
                          check=False)
    if done.returncode:
        raise RuntimeError(f"petastorm_writer.py {mode} failed:\n{done.stderr[-4000:]}")


@pytest.fixture(scope="session")
def petastorm_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of the datasets Petastorm wrote (``codecs``, ``partitioned``,
    ``plain``) and of ``seen.json``/``seen.npz``, what Petastorm read from them.

    Kept in ``.venv-petastorm/test-data/<hash of the writer script>`` (read only by the
    tests), so Spark runs again only when the writer changes."""
    if not PETASTORM_PYTHON.exists():
        pytest.skip(f"{PETASTORM_PYTHON} is missing: run scripts/petastorm-venv.sh to test "
                    "against the real Petastorm")
    digest = hashlib.sha256(WRITER.read_bytes()).hexdigest()[:16]
    kept = PETASTORM_PYTHON.parents[1] / "test-data" / digest
    if not (kept / "seen.json").exists():
        out = tmp_path_factory.mktemp("petastorm")
        _run("write", out)
        _run("read", out)
        kept.parent.mkdir(exist_ok=True)
        try:
            os.rename(out, kept)  # atomic: another session's copy may have won
        except OSError:
            shutil.rmtree(out, ignore_errors=True)
    return kept


@pytest.fixture(scope="session")
def seen(petastorm_data: Path) -> dict[str, Any]:
    """What Petastorm's own readers returned: ``seen.json`` merged with ``seen.npz``."""
    values: dict[str, Any] = json.loads((petastorm_data / "seen.json").read_text())
    with np.load(petastorm_data / "seen.npz") as arrays:
        values.update({name: arrays[name] for name in arrays.files})
    return values
