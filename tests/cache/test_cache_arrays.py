"""ArrayCache: NumPy arrays with dtype and shape, read back without a copy."""

from __future__ import annotations

import numpy as np
import pytest

from pfio.cache import ArrayCache, MultiprocessFileCache, NaiveCache
from pfio.cache.arrays import decode_array, encode_array


@pytest.mark.parametrize("dtype", ["uint8", "float32", ">i4", "complex64", "bool"])
def test_round_trip_keeps_dtype_shape_and_values(tmp_path, dtype):
    array = (np.arange(24) % 3).astype(dtype).reshape(2, 3, 4)
    with ArrayCache(MultiprocessFileCache(2, dir=str(tmp_path))) as cache:
        assert cache.put(1, array)
        got = cache.get(1)
    assert got.dtype == array.dtype and got.shape == (2, 3, 4)
    assert np.array_equal(got, array)


def test_hit_is_a_view_of_the_cached_bytes():
    data = encode_array(np.ones((4, 4), np.float64))
    got = decode_array(data)
    assert got.base is not None and not got.flags.writeable
    assert np.shares_memory(got, np.frombuffer(data, np.uint8))


def test_non_contiguous_arrays_are_stored_in_c_order():
    array = np.arange(20).reshape(4, 5)[:, ::2]
    assert np.array_equal(decode_array(encode_array(array)), array)


def test_miss_is_none():
    assert ArrayCache(NaiveCache(3)).get(0) is None


def test_get_and_cache_decodes_once():
    calls = []

    def make(i):
        calls.append(i)
        return np.full((2, 2), i, np.int16)

    cache = ArrayCache(NaiveCache(3))
    first = cache.get_and_cache(2, make)
    second = cache.get_and_cache(2, make)
    assert calls == [2] and np.array_equal(first, second) and len(cache) == 3


def test_object_arrays_are_refused():
    with pytest.raises(ValueError):
        encode_array(np.array([object()]))


def test_bytes_not_made_by_encode_are_refused():
    with pytest.raises(ValueError):
        decode_array(b"not an array at all")


def test_pickling_caches_are_refused():
    with pytest.raises(ValueError):
        ArrayCache(NaiveCache(1, do_pickle=True))
