"""Build hooks that pyproject.toml cannot express: the ``pfio-patches.pth`` startup hook, and
the tracer's C extension (``pfio.trace._native``, optional: without a compiler pfio installs
and the tracer runs its pure-Python path).

The hook goes to the top of ``site-packages`` (a ``.pth`` file is only read there), so that
every Python process whose environment has ``PFIO_PATCHES`` set (DataLoader workers started
by spawn or forkserver) imports pfio at startup and re-applies the parent's patches; see
:mod:`pfio.patches`. With the variable unset the line costs one dictionary lookup.
"""

import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

HOOK = "pfio-patches.pth"
HOOK_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), HOOK)


class BuildWithStartupHook(build_py):
    """``build_py`` that also puts the startup hook at the top of the build (and so of the
    wheel, regular or editable)."""

    def run(self) -> None:
        super().run()
        self.copy_file(HOOK_SOURCE, os.path.join(self.build_lib, HOOK))

    def get_outputs(self, include_bytecode: bool = True) -> list:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, HOOK)]


class _WithStartupHook:
    """An editable-install strategy of setuptools that also writes the startup hook."""

    def __init__(self, strategy) -> None:
        self._strategy = strategy

    def __call__(self, wheel, files, mapping) -> None:
        self._strategy(wheel, files, mapping)
        with open(HOOK_SOURCE, "rb") as f:
            wheel.writestr(HOOK, f.read())

    def __enter__(self):
        self._strategy.__enter__()
        return self

    def __exit__(self, *exc):
        return self._strategy.__exit__(*exc)


class EditableWithStartupHook(editable_wheel):
    """``pip install -e .`` installs the startup hook too (an editable wheel holds no
    build output of its own)."""

    def _select_strategy(self, *args, **kwargs):
        return _WithStartupHook(super()._select_strategy(*args, **kwargs))


# its source: one C file per job, and the header they share (a dependency: rebuilt when it
# changes, and shipped in the sdist). Not in a directory named `_native`: where the module
# was not built, Python would import that directory as a namespace package in its place.
NATIVE_SRC = "pfio/trace/_native_src"
NATIVE = Extension("pfio.trace._native",
                   [f"{NATIVE_SRC}/{name}.c" for name in ("config", "reader", "open", "module")],
                   depends=[f"{NATIVE_SRC}/native.h"], optional=True)

setup(cmdclass={"build_py": BuildWithStartupHook, "editable_wheel": EditableWithStartupHook},
      ext_modules=[NATIVE])
