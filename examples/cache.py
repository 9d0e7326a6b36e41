"""Caches: read-through caching of remote files, and PFIO-compatible index caches."""

import tempfile

import pfio
from pfio.cache import MultiprocessFileCache, ObjectCache

source = pfio.from_url("mem://remote")
with source.open("big.bin", "wb") as f:
    f.write(b"x" * 100_000)

with tempfile.TemporaryDirectory() as directory:
    # URL -> local file, shared by processes, size-bounded, validated against the source
    objects = ObjectCache(directory + "/objects", max_bytes=10 << 20)
    with objects.path("mem://remote/big.bin") as local_path:
        print(open(local_path, "rb").read(4))  # b'xxxx'

    # every read through this filesystem goes through the cache
    with pfio.from_url("mem://remote", cache=objects) as cached:
        print(len(cached.open("big.bin", "rb").read()))  # 100000

    # index -> bytes, shared by DataLoader workers, on-disk format of PFIO 2.x
    cache = MultiprocessFileCache(10, dir=directory)
    print(cache.get_and_cache(3, lambda i: f"item {i}".encode()))  # b'item 3'
    print(cache.get(3))  # b'item 3', a lock-free hit
    cache.close()
