"""PyTorch datasets of objects: s3torchconnector's call shape, batches fetched ahead,
DataLoader workers, distributed ranks, resuming with StatefulDataLoader; and the batches of
PfioImageDataset."""

import pickle
from operator import methodcaller

import numpy as np
import pytest
import torch

import pfio
from pfio.integrations.objects import PfioObject
from pfio.integrations.torch.images import PfioImageDataset
from pfio.integrations.torch.objects import PfioObjectDataset, PfioObjectIterableDataset

from .images import write_image_tree

COUNT = 23
#: the objects' names, sorted (the datasets' order), and their contents in that order
NAMES = sorted(f"part{i % 3}/{i:03d}.txt" for i in range(COUNT))
TEXTS = [f"object {int(name[6:9])}" for name in NAMES]


def write_objects(url):
    fs = pfio.from_url(url)
    for name, data in zip(NAMES, TEXTS, strict=True):
        if fs.scheme == "file":
            fs.makedirs(name.split("/")[0], exist_ok=True)
        with fs.open(name, "wb") as f:
            f.write(data.encode())


def text(obj):
    """A transform reading the whole object."""
    return obj.read().decode()


#: a transform that spawned workers can unpickle (this module is not importable in them)
read_bytes = methodcaller("read")


def name_of(obj):
    return obj.name


@pytest.fixture
def mem_url(request):
    url = f"mem://torch-objects-{request.node.name}/data"
    write_objects(url)
    return url


# -- map-style ----------------------------------------------------------------------------

def test_default_transform_gives_the_object(mem_url):
    dataset = PfioObjectDataset.from_prefix(mem_url)
    obj = dataset[0]
    assert isinstance(obj, PfioObject)
    assert (obj.url, obj.key, obj.read()) == \
        (f"{mem_url}/part0/000.txt", "data/part0/000.txt", b"object 0")


def test_transform_gets_each_object_in_name_order(mem_url):
    dataset = PfioObjectDataset.from_prefix(mem_url, transform=name_of)
    assert len(dataset) == COUNT
    assert [dataset[i] for i in range(COUNT)] == NAMES


def test_getitems_matches_getitem_in_order(mem_url):
    dataset = PfioObjectDataset.from_prefix(mem_url, transform=text, fetch_ahead=4)
    indices = [7, 0, 22, 7, -1, 3, 12, 5, 9]
    assert dataset.__getitems__(indices) == [dataset[i] for i in indices]


def test_getitems_without_fetching_ahead(mem_url):
    dataset = PfioObjectDataset.from_prefix(mem_url, transform=text, fetch_ahead=0)
    assert dataset.__getitems__([2, 1]) == [dataset[2], dataset[1]]


def test_getitems_names_a_missing_object(mem_url):
    dataset = PfioObjectDataset.from_prefix(mem_url, transform=text)
    pfio.from_url(mem_url).remove("part1/004.txt")
    with pytest.raises(FileNotFoundError, match="part1/004.txt"):
        dataset.__getitems__(list(range(COUNT)))


def test_getitems_refuses_an_index_out_of_range(mem_url):
    dataset = PfioObjectDataset.from_prefix(mem_url)
    with pytest.raises(IndexError, match="out of range"):
        dataset.__getitems__([0, COUNT])


def test_from_objects_keeps_the_order_given(mem_url):
    urls = [f"{mem_url}/part2/005.txt", f"{mem_url}/part0/000.txt"]
    dataset = PfioObjectDataset.from_objects(urls, transform=text)
    assert dataset.__getitems__([0, 1]) == ["object 5", "object 0"]


def test_empty_prefix_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no objects found"):
        PfioObjectDataset.from_prefix(str(tmp_path))


def test_dataset_pickles_small_after_use(mem_url):
    dataset = PfioObjectDataset.from_prefix(mem_url, transform=text)
    dataset.__getitems__([0, 1])
    assert len(pickle.dumps(dataset)) < 3000


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_dataloader_workers_read_every_object_once(tmp_path, method):
    write_objects(str(tmp_path))
    loader = torch.utils.data.DataLoader(
        PfioObjectDataset.from_prefix(str(tmp_path), transform=read_bytes), batch_size=4,
        num_workers=2, multiprocessing_context=method)
    got = [item.decode() for batch in loader for item in batch]
    assert sorted(got) == sorted(TEXTS)


def test_dataloader_on_s3_sends_one_get_per_object(s3_env, s3_bucket, s3_requests):
    url = f"s3://{s3_bucket}/train/"
    write_objects(url)
    dataset = PfioObjectDataset.from_prefix(url, transform=text)
    log = s3_requests(pfio.from_url(f"s3://{s3_bucket}"))
    got = [x for batch in torch.utils.data.DataLoader(dataset, batch_size=8) for x in batch]
    assert got == TEXTS
    assert [method for method, _, _ in log] == ["GET"] * COUNT


def test_s3torchconnector_options_pass_to_s3(s3_env, s3_bucket, monkeypatch):
    url = f"s3://{s3_bucket}/train/"
    write_objects(url)
    monkeypatch.delenv("S3_ENDPOINT")
    dataset = PfioObjectDataset.from_prefix(url, region="us-east-1", endpoint=s3_env,
                                            transform=text)
    assert dataset[0] == "object 0"


# -- iterable -----------------------------------------------------------------------------

def test_iterable_yields_every_object_in_order(mem_url):
    dataset = PfioObjectIterableDataset.from_prefix(mem_url, transform=text)
    assert list(dataset) == TEXTS


def test_iterable_even_ranks_read_as_many_objects(mem_url):
    per_rank = [list(PfioObjectIterableDataset.from_prefix(
        mem_url, transform=name_of, rank=r, world_size=4, shuffle=True, seed=2))
        for r in range(4)]
    assert {len(names) for names in per_rank} == {6}
    assert len({n for names in per_rank for n in names}) == COUNT


def test_iterable_uneven_ranks_read_each_object_once(mem_url):
    per_rank = [list(PfioObjectIterableDataset.from_prefix(
        mem_url, transform=name_of, rank=r, world_size=4, even=False)) for r in range(4)]
    assert sorted(n for names in per_rank for n in names) == NAMES


def test_iterable_without_sharding_gives_every_rank_everything(mem_url):
    dataset = PfioObjectIterableDataset.from_prefix(mem_url, rank=1, world_size=2,
                                                    enable_sharding=False, transform=name_of)
    assert len(list(dataset)) == COUNT


def test_iterable_shuffles_by_epoch(mem_url):
    dataset = PfioObjectIterableDataset.from_prefix(mem_url, transform=name_of, shuffle=True)
    first = list(dataset)
    dataset.set_epoch(1)
    second = list(dataset)
    assert first != second and sorted(first) == sorted(second)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_iterable_dataloader_workers_read_every_object_once(tmp_path, method):
    write_objects(str(tmp_path))
    dataset = PfioObjectIterableDataset.from_prefix(str(tmp_path), transform=read_bytes,
                                                    even=False)
    loader = torch.utils.data.DataLoader(dataset, batch_size=4, num_workers=2,
                                         multiprocessing_context=method)
    got = [item.decode() for batch in loader for item in batch]
    assert sorted(got) == sorted(TEXTS)


def test_iterable_state_resumes_in_one_process(mem_url):
    dataset = PfioObjectIterableDataset.from_prefix(mem_url, transform=name_of)
    everything = list(dataset)
    it = iter(dataset)
    head = [next(it) for _ in range(5)]
    state = dataset.state_dict()
    resumed = PfioObjectIterableDataset.from_prefix(mem_url, transform=name_of)
    resumed.load_state_dict(state)
    assert head + list(resumed) == everything
    assert list(resumed) == everything  # the next iteration starts over


def test_iterable_state_of_another_dataset_is_refused(mem_url):
    dataset = PfioObjectIterableDataset.from_prefix(mem_url)
    with pytest.raises(ValueError, match="objects"):
        dataset.load_state_dict({"epoch": 0, "yielded": 1, "objects": COUNT + 1})


def test_stateful_dataloader_resumes_exactly(tmp_path):
    from torchdata.stateful_dataloader import StatefulDataLoader

    write_objects(str(tmp_path))

    def loader():
        dataset = PfioObjectIterableDataset.from_prefix(str(tmp_path), transform=text,
                                                        shuffle=True, seed=5)
        return StatefulDataLoader(dataset, batch_size=3, num_workers=2,
                                  multiprocessing_context="fork")

    everything = [x for batch in loader() for x in batch]
    first = loader()
    it = iter(first)
    head = [x for _ in range(3) for x in next(it)]
    state = first.state_dict()
    del it
    second = loader()
    second.load_state_dict(state)
    tail = [x for batch in second for x in batch]
    assert head + tail == everything


# -- PfioImageDataset's batches -----------------------------------------------------------

@pytest.mark.parametrize("cache", [None, "raw", "decoded"])
def test_image_dataset_getitems_matches_getitem(request, tmp_path, cache):
    url = f"mem://torch-objects-{request.node.name}/images"
    write_image_tree(pfio.from_url(url))
    dataset = PfioImageDataset(url, cache=cache, cache_dir=str(tmp_path),
                               target_transform=lambda y: y * 10)
    indices = [11, 0, -1, 4, 4]
    for _epoch in range(2):
        batch = dataset.__getitems__(indices)
        expected = [dataset[i] for i in indices]
        assert [label for _, label in batch] == [label for _, label in expected]
        for (image, _), (want, _) in zip(batch, expected, strict=True):
            np.testing.assert_array_equal(image, want)


def test_image_dataset_getitems_refuses_an_index_out_of_range(request):
    url = f"mem://torch-objects-{request.node.name}/images"
    write_image_tree(pfio.from_url(url))
    with pytest.raises(IndexError):
        PfioImageDataset(url).__getitems__([0, 12])


def test_image_dataset_getitems_names_a_missing_image(request):
    url = f"mem://torch-objects-{request.node.name}/images"
    items = write_image_tree(pfio.from_url(url))
    dataset = PfioImageDataset(url)
    pfio.from_url(url).remove(items[3][0])
    with pytest.raises(FileNotFoundError, match=items[3][0]):
        dataset.__getitems__(list(range(len(items))))


def test_image_dataset_on_a_zip_on_s3_in_batches(s3_env, s3_bucket, s3_requests):
    with pfio.from_url(f"s3://{s3_bucket}").open_zip("train.zip", "w") as archive:
        items = write_image_tree(archive)
    dataset = PfioImageDataset(f"s3://{s3_bucket}/train.zip")
    loader = torch.utils.data.DataLoader(dataset, batch_size=5)
    labels = torch.cat([y for _, y in loader]).tolist()
    assert labels == [label for _, label in sorted(items)]
