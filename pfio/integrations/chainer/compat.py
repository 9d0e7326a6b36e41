"""Importing Chainer 7.8.1 on NumPy 2.

Chainer 7.8.1 (its last release) reads ``numpy.sctypes`` at import, an attribute NumPy 2
removed. :func:`import_chainer` puts back exactly that attribute, with NumPy 1's contents, if
it is missing, and imports Chainer. Nothing else is changed.
"""

from __future__ import annotations

from types import ModuleType


def import_chainer() -> ModuleType:
    """Import and return ``chainer``, restoring ``numpy.sctypes`` first on NumPy 2."""
    import numpy as np

    if not hasattr(np, "sctypes"):  # (set through vars: NumPy 2's stubs have no sctypes)
        vars(np)["sctypes"] = {
            "int": [np.int8, np.int16, np.int32, np.int64],
            "uint": [np.uint8, np.uint16, np.uint32, np.uint64],
            "float": [np.float16, np.float32, np.float64, np.longdouble],
            "complex": [np.complex64, np.complex128, np.clongdouble],
            "others": [bool, object, bytes, str, np.void],
        }
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
        import chainer
    return chainer
