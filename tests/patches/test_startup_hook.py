"""The ``pfio-patches.pth`` startup hook: it applies the patches named by ``PFIO_PATCHES`` in
every Python process at startup, and does nothing (not even ``import pfio``) without it."""

import os
import site
import subprocess
import sys

from .conftest import HOOK_SOURCE

PROBE = "import os, sys; print('pfio' in sys.modules, os.listdir('mem://hook-probe') == [])"


def _run(code, env_patches, hook_path, *args, python=()):
    env = {k: v for k, v in os.environ.items() if k != "PFIO_PATCHES"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [*hook_path, env.get("PYTHONPATH")]))
    if env_patches is not None:
        env["PFIO_PATCHES"] = env_patches
    result = subprocess.run([sys.executable, *python, "-c", code, *args], env=env,
                            capture_output=True, text=True, timeout=120)
    return result


def test_the_hook_is_one_line_that_imports_pfio_only_when_asked():
    lines = HOOK_SOURCE.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("import os, sys;")
    assert "PFIO_PATCHES" in lines[0]


#: runs the source tree's hook as site would (python -S: no installed hook; the packages
#: reached through PYTHONPATH instead), then tells whether it imported pfio
RUN_HOOK = (f"exec(open({str(HOOK_SOURCE)!r}).read()); import sys; "
            "print('pfio' in sys.modules)")
NO_SITE = site.getsitepackages()


def test_the_hook_imports_pfio_in_a_spawned_process_only():
    spawned = _run(RUN_HOOK, "os", NO_SITE, "--multiprocessing-fork", python=["-S"])
    other = _run(RUN_HOOK, "os", NO_SITE, "tool-argument", python=["-S"])
    assert (spawned.stdout.split(), other.stdout.split()) == (["True"], ["False"]), \
        spawned.stderr + other.stderr


def test_the_hook_imports_pfio_in_the_forkserver():
    code = "from multiprocessing.forkserver import main; " + RUN_HOOK
    result = _run(code, "os", NO_SITE, python=["-S"])
    assert result.stdout.split() == ["True"], result.stderr


def test_without_pfio_patches_nothing_is_imported(startup_hook_path):
    result = _run("import sys; print('pfio' in sys.modules, 'wrapt' in sys.modules)", None,
                  startup_hook_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


def test_pfio_patches_are_applied_at_startup_of_a_spawned_process(startup_hook_path):
    result = _run(PROBE, "os", startup_hook_path, "--multiprocessing-fork")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]


UNRELATED = "import os, pfio; print(pfio.active_patches(), os.path.exists('mem://anything'))"


def test_an_unrelated_process_with_pfio_patches_set_is_not_patched(startup_hook_path):
    result = _run(UNRELATED, "os,os.path", startup_hook_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]", "False"]


SCRIPT = """
import multiprocessing, subprocess, sys
import pfio

CHILD = "import os, pfio; print(pfio.active_patches())"

def patches(_):
    import pfio
    return pfio.active_patches()

if __name__ == "__main__":
    pfio.patch_all(["os"])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print("spawned", pool.map(patches, [0])[0])
    tool = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    print("subprocess", tool.stdout.strip(), tool.stderr[-2000:])
"""


def test_a_patched_script_patches_its_workers_not_its_subprocesses(startup_hook_path, tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PFIO_PATCHES"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [*startup_hook_path,
                                                      env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, str(tmp_path / "script.py")], env=env,
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.splitlines() == ["spawned ['os']", "subprocess [] "]
