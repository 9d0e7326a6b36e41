import builtins
import inspect
import io
import os
import subprocess
import sys
import textwrap

import numpy
import pytest

from pfio.patches import active_patches, patch_all, patched, patched_functions, unpatch_all


def test_patch_all_wraps_and_unpatch_restores_exactly():
    original_open, original_exists = builtins.open, os.path.exists
    patch_all(["builtins", "os.path"])
    assert builtins.open is not original_open
    unpatch_all()
    assert builtins.open is original_open
    assert io.open is original_open
    assert os.path.exists is original_exists


def test_patching_twice_wraps_once():
    patch_all("numpy")
    first = numpy.load
    patch_all("numpy")
    assert numpy.load is first
    assert first.__wrapped__.__module__.startswith("numpy")


def test_patched_functions_keep_name_doc_and_signature():
    original = numpy.save
    patch_all("numpy")
    assert numpy.save.__name__ == original.__name__
    assert numpy.save.__doc__ == original.__doc__
    assert inspect.signature(numpy.save) == inspect.signature(original)


def test_patched_context_removes_only_what_it_added():
    patch_all("numpy")
    with patched(["numpy", "builtins"]) as active:
        assert active == ["builtins", "numpy"]
    assert active_patches() == ["numpy"]


def test_listing_what_is_patched():
    patch_all("os.path")
    assert patched_functions() == ["os.path.abspath", "os.path.exists", "os.path.getmtime",
                                   "os.path.getsize",
                                   "os.path.isdir", "os.path.isfile", "os.path.islink",
                                   "os.path.lexists"]


def test_unknown_target_is_a_value_error():
    with pytest.raises(ValueError, match="unknown patch targets"):
        patch_all(["nope"])


def _run(script, tmp_path):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          check=True, timeout=120).stdout.split()


def test_patch_applies_to_a_library_imported_later(tmp_path):
    out = _run("""
        import sys, pfio
        assert "PIL.Image" not in sys.modules
        pfio.patch_all(["PIL"])
        from PIL import Image
        print(type(Image.open).__name__)
    """, tmp_path)
    assert out == ["FunctionWrapper"]


def test_unpatch_before_import_leaves_the_library_alone(tmp_path):
    out = _run("""
        import pfio
        pfio.patch_all(["PIL"])
        pfio.unpatch_all()
        from PIL import Image
        print(type(Image.open).__name__)
    """, tmp_path)
    assert out == ["function"]


def test_spawned_processes_inherit_patches(tmp_path):
    out = _run("""
        import multiprocessing as mp
        import pfio

        def report(_):
            import builtins
            return type(builtins.open).__name__, ",".join(pfio.active_patches())

        if __name__ == "__main__":
            pfio.patch_all(["builtins", "numpy"])
            with mp.get_context("spawn").Pool(1) as pool:
                print(*pool.map(report, [0])[0])
    """, tmp_path)
    assert out == ["function", "builtins,numpy"]  # (unpatched: builtin_function_or_method)


def test_patch_all_without_targets_patches_everything():
    assert patch_all() == sorted(["builtins", "os", "os.path", "glob", "cv2", "pandas", "PIL",
                                  "numpy", "torch", "h5py", "soundfile", "shutil", "chainer",
                                  "pytorch_pfn_extras"])


class _PathLike:
    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path


def test_a_wrapper_sees_a_path_object_as_its_url_where_the_spec_puts_the_path():
    from pfio.patches.machinery import PatchSpec

    seen = []

    def wrapper(wrapped, instance, args, kwargs):
        seen.append((args, kwargs))
        return wrapped(*args, **kwargs)

    def save(obj, f=None):
        return f

    save_patched = PatchSpec("m", "save", wrapper, path=(1, "f")).patched(save)
    local = _PathLike("/tmp/x")
    assert save_patched(1, _PathLike("mem://s/a")) == "mem://s/a"
    assert save_patched(obj=1, f=_PathLike("mem://s/b")) == "mem://s/b"
    assert save_patched(_PathLike("mem://s/c"), local) is local  # not where the path is
    assert seen[:2] == [((1, "mem://s/a"), {}), ((), {"obj": 1, "f": "mem://s/b"})]
