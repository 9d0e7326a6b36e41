import pickle

import numpy as np
import pytest
import torch
from PIL import Image

import pfio
from pfio.integrations.torch import PfioImageDataset, PfioShardDataset

from .images import color, write_image_tree


@pytest.fixture
def tree(request):
    url = f"mem://datasets-{request.node.name}/train"
    fs = pfio.from_url(url)
    return url, write_image_tree(fs)


def test_directory_classes_become_labels(tree):
    url, items = tree
    dataset = PfioImageDataset(url)
    assert dataset.classes == ["class_0", "class_1", "class_2"]
    assert len(dataset) == len(items)
    image, label = dataset[5]
    assert (image.dtype, image.shape, label) == (np.uint8, (8, 8, 3), 1)
    assert tuple(image[0, 0]) == color(1, 1)


def test_pil_decoder_gives_rgb_images(tree):
    url, _ = tree
    image, _ = PfioImageDataset(url, decoder="pil")[0]
    assert isinstance(image, Image.Image) and image.mode == "RGB"
    assert image.getpixel((0, 0)) == color(0, 0)


def test_transforms_apply_to_images_and_labels(tree):
    url, _ = tree
    dataset = PfioImageDataset(url, transform=lambda im: im.shape,
                               target_transform=lambda y: y + 100)
    assert dataset[0] == ((8, 8, 3), 100)


def test_list_file_of_paths_and_labels(tree):
    url, items = tree
    with pfio.open_url(f"{url}/list.txt", "w") as f:
        f.write("# path label\n\n")
        f.writelines(f"{path} {label + 5}\n" for path, label in items)
    dataset = PfioImageDataset(f"{url}/list.txt")
    assert len(dataset) == len(items)
    assert dataset[len(items) - 1][1] == 7


def test_malformed_list_file_names_the_line(tree):
    url, _ = tree
    with pfio.open_url(f"{url}/bad.txt", "w") as f:
        f.write("class_0/img_000.png 0\nno-label-here\n")
    with pytest.raises(ValueError, match="bad.txt:2"):
        PfioImageDataset(f"{url}/bad.txt")


def test_list_of_urls_and_pairs(tree):
    url, items = tree
    dataset = PfioImageDataset([f"{url}/{items[0][0]}", (f"{url}/{items[-1][0]}", 9)])
    assert [dataset[0][1], dataset[1][1]] == [-1, 9]


def test_missing_source_is_file_not_found():
    with pytest.raises(FileNotFoundError):
        PfioImageDataset("mem://datasets-missing/nothing-here")


def test_empty_source_is_a_value_error(request):
    url = f"mem://datasets-{request.node.name}/empty"
    pfio.from_url(url, create=True).makedirs("d")
    with pytest.raises(ValueError, match="no images"):
        PfioImageDataset(url)


def test_index_out_of_range(tree):
    url, items = tree
    dataset = PfioImageDataset(url)
    assert dataset[-1][1] == 2
    with pytest.raises(IndexError):
        dataset[len(items)]


def test_undecodable_bytes_are_a_clear_error(tree):
    url, _ = tree
    with pfio.open_url(f"{url}/class_0/broken.png", "wb") as f:
        f.write(b"not an image")
    dataset = PfioImageDataset(url)
    broken = next(i for i in range(len(dataset)) if "broken" in dataset.reader.items.path(i))
    with pytest.raises(ValueError, match="decode"):
        dataset[broken]


def test_dataset_pickles_small(tree):
    url, _ = tree
    dataset = PfioImageDataset(url)
    dataset[0]  # opens the filesystem
    assert len(pickle.dumps(dataset)) < 2000


@pytest.mark.parametrize("cache", ["raw", "decoded"])
def test_cached_items_match_uncached(tree, tmp_path, cache):
    url, _ = tree
    plain = PfioImageDataset(url)
    cached = PfioImageDataset(url, cache=cache, cache_dir=str(tmp_path))
    for _epoch in range(2):
        for i in range(len(plain)):
            np.testing.assert_array_equal(cached[i][0], plain[i][0])


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_dataloader_workers_read_every_image(tmp_path, method):
    items = write_image_tree(pfio.from_url(str(tmp_path)), classes=2, per_class=3)
    loader = torch.utils.data.DataLoader(
        PfioImageDataset(str(tmp_path)), batch_size=2, num_workers=2,
        multiprocessing_context=method)
    labels = torch.cat([y for _, y in loader]).tolist()
    assert sorted(labels) == sorted(label for _, label in items)


def test_distributed_sampler_splits_the_dataset(tree):
    url, items = tree
    dataset = PfioImageDataset(url)
    seen = []
    for rank in range(2):
        sampler = torch.utils.data.DistributedSampler(dataset, num_replicas=2, rank=rank,
                                                      shuffle=False)
        seen += list(sampler)
    assert sorted(seen) == list(range(len(items)))


def _zip_shards(request, count):
    base = f"mem://shards-{request.node.name}"
    fs = pfio.from_url(base)
    urls = []
    for shard in range(count):
        with fs.open_zip(f"shard-{shard}.zip", "w") as archive:
            write_image_tree(archive, classes=2, per_class=2)
        urls.append(f"{base}/shard-{shard}.zip")
    return urls


def test_shards_are_read_once_across_ranks_and_workers(request):
    pytest.importorskip("pfio.containers.zip")
    shards = _zip_shards(request, 5)
    seen = []
    for rank in range(2):
        dataset = PfioShardDataset(shards, rank=rank, world_size=2, shuffle=True, seed=3)
        seen += dataset.my_shards()
    assert sorted(seen) == sorted(shards)


def test_shard_order_is_deterministic_per_epoch(request):
    pytest.importorskip("pfio.containers.zip")
    shards = _zip_shards(request, 4)
    a = PfioShardDataset(shards, shuffle=True, seed=1)
    b = PfioShardDataset(shards, shuffle=True, seed=1)
    orders = []
    for epoch in range(3):
        a.set_epoch(epoch)
        b.set_epoch(epoch)
        assert a.my_shards() == b.my_shards()
        orders.append(a.my_shards())
    assert len({tuple(o) for o in orders}) > 1


def test_shard_dataset_yields_every_sample_with_labels(request):
    pytest.importorskip("pfio.containers.zip")
    shards = _zip_shards(request, 2)
    samples = list(PfioShardDataset(shards, shuffle=True, seed=0, shuffle_buffer=3))
    assert sorted(label for _, label in samples) == [0, 0, 0, 0, 1, 1, 1, 1]


def _webdataset_shards(base, count=2, per_shard=3):
    from pfio.integrations.shards import ShardWriter

    with ShardWriter(f"{base}/train-%02d.tar", maxcount=per_shard) as sink:
        for i in range(count * per_shard):
            image = Image.fromarray(np.full((8, 8, 3), i, np.uint8))
            sink.write({"__key__": f"{i:04d}", "png": image, "cls": i % 2, "json": {"i": i}})
    return sink.shards


def test_shard_dataset_labels_webdataset_samples_by_their_cls(tmp_path):
    shards = _webdataset_shards(str(tmp_path))
    items = list(PfioShardDataset(f"{tmp_path}/train-{{00..01}}.tar", classes=[]))
    assert [label for _, label in items] == [0, 1, 0, 1, 0, 1]
    assert [int(image[0, 0, 0]) for image, _ in items] == list(range(6))
    assert len(shards) == 2


def test_shard_dataset_reads_each_tar_shard_with_one_get(s3_env, s3_bucket, s3_requests):
    pytest.importorskip("boto3")
    base = f"s3://{s3_bucket}/wds"
    shards = _webdataset_shards(base)
    log = s3_requests(pfio.from_url(base))
    assert len(list(PfioShardDataset(shards, classes=[]))) == 6
    assert [method for method, _, _ in log] == ["GET", "GET"]


def test_shard_dataset_finds_its_classes_with_one_get_of_the_first_shard(s3_env, s3_bucket,
                                                                         s3_requests):
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name in ("cat/1.png", "dog/2.png", "cat/3.png"):
            info = tarfile.TarInfo(name)
            info.size = 3
            tar.addfile(info, io.BytesIO(b"png"))
    shard = f"s3://{s3_bucket}/classes.tar"
    with pfio.open_url(shard, "wb") as f:
        f.write(out.getvalue())
    log = s3_requests(pfio.from_url(f"s3://{s3_bucket}/"))
    assert PfioShardDataset([shard]).classes == ["cat", "dog"]
    assert [method for method, _, _ in log] == ["GET"]
