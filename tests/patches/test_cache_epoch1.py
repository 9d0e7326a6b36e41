"""``patch_all(cache=True)`` costs nothing on epoch 1 and no request on epoch 2 (issue 24):
an ImageFolder-style dataset (image_folder.py) on S3 (a moto server over real HTTP) sends one
GET per image and no HEAD on its first epoch, nothing on its second within the cache's
``ttl``, and one HEAD per image once the ``ttl`` has passed (plus a GET of what changed).
``PfioImageDataset(cache="raw")`` likewise. Two processes reading the same images at once
leave one valid entry per image."""

import io
import multiprocessing
import os

import numpy as np
import pytest
from PIL import Image

import pfio
from pfio.cache.object_cache import ObjectCache, Source, set_default_object_cache
from pfio.fs.s3 import S3

from .image_folder import ImageFolder

CLASSES = ("cat", "dog")
PER_CLASS = 3


def pixels(index: int, size: int = 8) -> np.ndarray:
    return np.full((size, size, 3), (index * 30 % 256, 255 - index * 30 % 256, 7), np.uint8)


def png(index: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels(index)).save(buffer, format="PNG")
    return buffer.getvalue()


def names() -> list[str]:
    return [f"{c}/{i}.png" for c in CLASSES for i in range(PER_CLASS)]


def expected() -> list[bytes]:
    return [pixels(i).tobytes() for i in range(len(names()))]


@pytest.fixture
def train(s3_env, s3_bucket):
    """``s3://<bucket>/train``: two class folders of PNGs; yields its URL."""
    with pfio.from_url(f"s3://{s3_bucket}/train") as fs:
        for index, name in enumerate(names()):
            with fs.open(name, "wb") as f:
                f.write(png(index))
    return f"s3://{s3_bucket}/train"


@pytest.fixture
def cache(tmp_path):
    """The patches' object cache, set as :func:`default_object_cache` sets it (checked at
    most once a minute, whole copies not synced)."""
    made = ObjectCache(str(tmp_path / "objects"), validate="ttl", sync=False)
    set_default_object_cache(made)
    return made


@pytest.fixture
def requests(s3_env, s3_bucket, s3_requests):
    """The requests this process sends to the bucket, by method: ``counts()`` since the
    last ``clear()``."""
    log = s3_requests(S3(s3_bucket))

    class Requests:
        def counts(self) -> dict[str, int]:
            found: dict[str, int] = {}
            for method, path, _ in log:
                if path.startswith(f"/{s3_bucket}/"):
                    found[method] = found.get(method, 0) + 1
            return found

        def clear(self) -> None:
            log.clear()

    return Requests()


def epoch(dataset: ImageFolder) -> list[bytes]:
    return [dataset[i][0] for i in range(len(dataset))]


def test_epoch_one_sends_one_get_per_image_and_no_head(train, cache, requests):
    with pfio.patched(cache=True):
        dataset = ImageFolder(train)
        requests.clear()  # the listing is not the epoch's
        assert epoch(dataset) == expected()
    assert requests.counts() == {"GET": len(names())}


def test_epoch_two_sends_nothing(train, cache, requests):
    with pfio.patched(cache=True):
        dataset = ImageFolder(train)
        epoch(dataset)
        requests.clear()
        assert epoch(dataset) == expected()
    assert requests.counts() == {}


def test_open_reads_each_file_with_one_get_then_from_the_cache(train, cache, requests):
    urls = [f"{train}/{name}" for name in names()]
    with pfio.patched("builtins", cache=True):
        for _ in range(2):
            for index, url in enumerate(urls):
                with open(url, "rb") as f:
                    assert f.read() == png(index)
    assert requests.counts() == {"GET": len(urls)}


def test_an_image_changed_within_the_ttl_is_read_from_the_cache(train, cache, requests):
    with pfio.patched(cache=True):
        dataset = ImageFolder(train)
        epoch(dataset)
        with pfio.from_url(train) as fs, fs.open(names()[0], "wb") as f:
            f.write(png(40))
        requests.clear()
        assert epoch(dataset) == expected()
    assert requests.counts() == {}


def test_after_the_ttl_each_image_is_checked_and_a_changed_one_read_again(train, tmp_path,
                                                                          requests):
    set_default_object_cache(ObjectCache(str(tmp_path / "objects"), validate="ttl", ttl=0,
                                         sync=False))
    with pfio.patched(cache=True):
        dataset = ImageFolder(train)
        epoch(dataset)
        with pfio.from_url(train) as fs, fs.open(names()[0], "wb") as f:
            f.write(png(40))
        requests.clear()
        assert epoch(dataset) == [pixels(40).tobytes(), *expected()[1:]]
    assert requests.counts() == {"HEAD": len(names()), "GET": 1}


def test_without_the_cache_an_image_is_read_with_one_get(s3_env, s3_bucket, requests):
    noise = np.random.default_rng(0).integers(0, 255, (160, 160, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noise).save(buffer, format="PNG")
    assert len(buffer.getvalue()) > 64 << 10  # more than a random-access opening reads
    with pfio.from_url(f"s3://{s3_bucket}") as fs, fs.open("big.png", "wb") as f:
        f.write(buffer.getvalue())
    requests.clear()
    with pfio.patched("PIL"), Image.open(f"s3://{s3_bucket}/big.png") as image:
        assert np.array_equal(np.asarray(image.convert("RGB")), noise)
    assert requests.counts() == {"GET": 1}


def test_pfio_image_dataset_raw_cache_sends_one_get_per_image_then_none(train, tmp_path,
                                                                         requests):
    from pfio.integrations.torch import PfioImageDataset

    dataset = PfioImageDataset(train + "/", decoder="pil", cache="raw",
                               cache_dir=str(tmp_path / "raw"))
    requests.clear()
    first = [np.asarray(dataset[i][0]).tobytes() for i in range(len(dataset))]
    assert first == expected()
    assert requests.counts() == {"GET": len(names())}
    requests.clear()
    assert [np.asarray(dataset[i][0]).tobytes() for i in range(len(dataset))] == first
    assert requests.counts() == {}


def _epoch_in_a_child(cache: ObjectCache, train: str, bucket: str, barrier, results) -> None:
    set_default_object_cache(cache)
    s3 = S3(bucket)
    gets = []
    s3.connection.add_request_hook(lambda method, path, headers: gets.append(method == "GET"))
    with pfio.patched(cache=True):
        dataset = ImageFolder(train)
        gets.clear()
        barrier.wait()
        results.put((epoch(dataset) == expected(), sum(gets)))


def test_two_processes_missing_the_same_images_leave_one_valid_entry_each(
        train, cache, s3_bucket):
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    children = [ctx.Process(target=_epoch_in_a_child,
                            args=(cache, train, s3_bucket, barrier, results))
                for _ in range(2)]
    for child in children:
        child.start()
    outcomes = [results.get(timeout=60) for _ in children]
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    assert all(same for same, _ in outcomes)
    assert sum(gets for _, gets in outcomes) == len(names())  # one GET per image in all
    with pfio.from_url(train) as fs:
        for index, name in enumerate(names()):
            source = Source(fs, name)
            with open(cache.entry_path(source, ".obj"), "rb") as f:
                assert f.read() == png(index)
            assert cache.entry_meta(source)["bytes"] == len(png(index))
    assert not [n for _, _, files in os.walk(cache.dir) for n in files if n.endswith(".part")]
