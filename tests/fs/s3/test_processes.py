"""One S3 filesystem shared by threads, and pickled to worker processes (fork, spawn,
forkserver) as a DataLoader does."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from pfio.fs.s3 import S3

_worker_fs: S3 | None = None


def _init_worker(fs: S3) -> None:
    global _worker_fs
    _worker_fs = fs


def _digest(key: str) -> tuple[str, int]:
    assert _worker_fs is not None
    with _worker_fs.open(key, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest(), os.getpid()


@pytest.fixture
def dataset(s3_env: str, s3_bucket: str) -> tuple[S3, dict[str, str]]:
    # explicit credentials travel with the pickled filesystem (a forkserver started
    # earlier in the session has the environment of that time)
    fs = S3(s3_bucket, aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
            engine=os.environ["PFIO_S3_ENGINE"])
    digests = {}
    for i in range(16):
        data = os.urandom(10_000 + i * 997)
        with fs.open(f"items/{i:02d}.bin", "wb") as f:
            f.write(data)
        digests[f"items/{i:02d}.bin"] = hashlib.sha256(data).hexdigest()
    return fs, digests


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_workers_read_through_one_pickled_fs(dataset, method: str) -> None:
    fs, digests = dataset
    fs.stat("items/00.bin")  # the parent's client and engine exist before the workers
    with fs.open("items/00.bin", "rb") as f:  # start
        f.read()
    ctx = multiprocessing.get_context(method)
    keys = sorted(digests)
    with ctx.Pool(4, initializer=_init_worker, initargs=(fs,)) as pool:
        results = pool.map(_digest, keys, chunksize=1)
    assert [r[0] for r in results] == [digests[k] for k in keys]
    assert os.getpid() not in {r[1] for r in results}


def test_threads_share_one_fs(dataset) -> None:
    fs, digests = dataset

    def digest(key: str) -> str:
        with fs.open(key, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    keys = sorted(digests) * 4
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(digest, keys)) == [digests[k] for k in keys]


def test_threads_share_one_reader_through_read_at(dataset) -> None:
    fs, _ = dataset
    with fs.open("items/15.bin", "rb") as f:
        whole = f.read()
        spans = [(i * 1000, 1500) for i in range(20)]
        with ThreadPoolExecutor(8) as pool:
            parts = list(pool.map(lambda s: f.read_at(*s), spans))
    assert parts == [whole[o:o + n] for o, n in spans]


class _Items:
    """A map-style dataset of the objects of one S3 filesystem."""

    def __init__(self, fs: S3, keys: list[str]) -> None:
        self.fs = fs
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: int) -> str:
        with self.fs.open(self.keys[i], "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_dataloader_workers_after_the_parent_read(dataset, method: str) -> None:
    torch_data = pytest.importorskip("torch.utils.data")
    fs, digests = dataset
    keys = sorted(digests)
    items = _Items(fs, keys)
    assert items[0] == digests[keys[0]]  # the parent's engine is in use before the fork
    loader = torch_data.DataLoader(items, batch_size=4, num_workers=2,
                                   multiprocessing_context=method)
    got = [digest for batch in loader for digest in batch]
    assert got == [digests[k] for k in keys]
