"""The examples in examples/ (and so the README's tour) run as written."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(example, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = subprocess.run([sys.executable, str(example)], capture_output=True, text=True,
                            timeout=180, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
