"""The ``pfio-patches.pth`` startup hook: it applies the patches named by ``PFIO_PATCHES`` in
every Python process at startup, and does nothing (not even ``import pfio``) without it."""

import os
import subprocess
import sys

from .conftest import HOOK_SOURCE

PROBE = "import os, sys; print('pfio' in sys.modules, os.listdir('mem://hook-probe') == [])"


def _run(code, env_patches, hook_path):
    env = {k: v for k, v in os.environ.items() if k != "PFIO_PATCHES"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [*hook_path, env.get("PYTHONPATH")]))
    if env_patches is not None:
        env["PFIO_PATCHES"] = env_patches
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    return result


def test_the_hook_is_one_line_that_imports_pfio_only_when_asked():
    lines = HOOK_SOURCE.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("import os;")
    assert "PFIO_PATCHES" in lines[0]


def test_without_pfio_patches_nothing_is_imported(startup_hook_path):
    result = _run("import sys; print('pfio' in sys.modules, 'wrapt' in sys.modules)", None,
                  startup_hook_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


def test_pfio_patches_are_applied_at_startup(startup_hook_path):
    result = _run(PROBE, "os", startup_hook_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
