"""Object datasets without a framework: listing prefixes on every filesystem, the object
handle, reading whole objects (one GET on S3), fetching ahead, and the readers' plan."""

import io
import pickle
import threading
import time

import numpy as np
import pytest

import pfio
from pfio.integrations.dataset_io import fetch_ahead
from pfio.integrations.image_items import collect
from pfio.integrations.objects import (
    ObjectReader,
    PfioObject,
    list_objects,
    list_prefix,
    reader_plan,
)

CONTENTS = {f"d{i % 2}/obj-{i:02d}.bin": bytes([i]) * (100 + i) for i in range(6)}


def write(fs, contents=CONTENTS):
    for name, data in contents.items():
        if fs.scheme == "file":
            fs.makedirs(name.rpartition("/")[0], exist_ok=True)
        with fs.open(name, "wb") as f:
            f.write(data)


@pytest.fixture
def mem_url(request):
    url = f"mem://objects-{request.node.name}/data"
    write(pfio.from_url(url))
    return url


def read_all(url, **options):
    reader = ObjectReader(list_prefix(url, **options), options)
    return {reader.objects.name(i): reader.fetch(i).read() for i in range(len(reader))}


# -- listing ------------------------------------------------------------------------------

def test_local_prefix_lists_files_sorted_with_sizes(tmp_path):
    write(pfio.from_url(str(tmp_path)))
    objects = list_prefix(str(tmp_path))
    names = [objects.name(i) for i in range(len(objects))]
    assert names == sorted(CONTENTS)
    assert [objects.size(i) for i in range(len(objects))] == [len(CONTENTS[n]) for n in names]
    assert objects.url(0) == f"{tmp_path}/{names[0]}"


def test_mem_prefix_reads_every_object(mem_url):
    assert read_all(mem_url) == CONTENTS


def test_trailing_slash_is_the_same_prefix(mem_url):
    assert list_prefix(mem_url + "/").url(0) == list_prefix(mem_url).url(0)


def test_partial_name_prefix_filters_like_s3(mem_url):
    objects = list_prefix(f"{mem_url}/d1/obj-0")
    assert [objects.name(i) for i in range(len(objects))] == \
        ["obj-01.bin", "obj-03.bin", "obj-05.bin"]
    assert objects.url(0) == f"{mem_url}/d1/obj-01.bin"


def test_missing_prefix_is_file_not_found_naming_it(mem_url):
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        list_prefix(f"{mem_url}/nothing-here")


def test_empty_directory_is_a_clear_value_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no objects found under .*empty$"):
        list_prefix(str(tmp_path / "empty"))


def test_zip_and_a_directory_inside_it(mem_url):
    fs = pfio.from_url(mem_url)
    with fs.open_zip("set.zip", "w") as archive:
        write(archive)
    assert read_all(f"{mem_url}/set.zip") == CONTENTS
    inside = read_all(f"{mem_url}/set.zip/d0")
    assert inside == {n.split("/")[1]: d for n, d in CONTENTS.items() if n.startswith("d0/")}


def test_list_objects_keeps_the_order_given(mem_url):
    urls = [f"{mem_url}/d1/obj-03.bin", f"{mem_url}/d0/obj-00.bin"]
    reader = ObjectReader(list_objects(urls))
    assert [reader.fetch(i).url for i in range(2)] == urls
    assert reader.fetch(0).read() == CONTENTS["d1/obj-03.bin"]


def test_list_objects_reaches_members_of_a_zip(mem_url):
    with pfio.from_url(mem_url).open_zip("set.zip", "w") as archive:
        write(archive)
    reader = ObjectReader(list_objects(f"{mem_url}/set.zip/d1/obj-05.bin"))
    assert reader.fetch(0).read() == CONTENTS["d1/obj-05.bin"]


def test_list_objects_refuses_nothing():
    with pytest.raises(ValueError, match="no object URLs"):
        list_objects([])


def test_relative_local_paths_become_absolute(tmp_path, monkeypatch):
    write(pfio.from_url(str(tmp_path)))
    monkeypatch.chdir(tmp_path)
    obj = ObjectReader(list_objects("d0/obj-00.bin")).fetch(0)
    assert (obj.url, obj.key, obj.bucket) == ((f"{tmp_path}/d0/obj-00.bin",) * 2 + ("",))


# -- the object handle --------------------------------------------------------------------

def test_lazy_object_is_a_seekable_file(mem_url):
    obj = ObjectReader(list_prefix(mem_url)).object(1)
    data = CONTENTS[obj.name]
    assert (obj.size, obj.tell()) == (len(data), 0)
    assert obj.read(3) == data[:3]
    buffer = bytearray(4)
    assert obj.readinto(buffer) == 4 and bytes(buffer) == data[3:7]
    assert obj.seek(-2, io.SEEK_END) == len(data) - 2
    assert obj.read(None) == data[-2:]


def test_object_names_its_url_key_and_bucket(mem_url):
    obj = ObjectReader(list_prefix(mem_url)).object(0)
    assert obj.url == f"{mem_url}/d0/obj-00.bin"
    assert obj.key == "data/d0/obj-00.bin"
    assert obj.bucket == mem_url.split("/")[2]
    assert obj.name == "d0/obj-00.bin"


def test_object_pickles_with_its_bytes_and_position(mem_url):
    obj = ObjectReader(list_prefix(mem_url)).object(2)
    obj.seek(5)
    copy = pickle.loads(pickle.dumps(obj))
    assert (copy.url, copy.tell(), copy.read()) == (obj.url, 5, CONTENTS[obj.name][5:])


def test_object_needs_data_or_an_opener():
    with pytest.raises(ValueError, match="either"):
        PfioObject("mem://x/y", "y")


def test_closed_object_refuses_reads(mem_url):
    obj = ObjectReader(list_prefix(mem_url)).fetch(0)
    obj.close()
    with pytest.raises(ValueError, match="closed"):
        obj.read()


# -- reading ------------------------------------------------------------------------------

def test_reader_pickles_small_after_use(mem_url):
    reader = ObjectReader(list_prefix(mem_url))
    reader.fetch(0)
    assert len(pickle.dumps(reader)) < 2000


def test_fetch_many_matches_fetch_in_order(mem_url):
    reader = ObjectReader(list_prefix(mem_url))
    indices = [5, 0, 3, 3, -1, 2]
    many = [(o.url, o.read()) for o in reader.fetch_many(indices, window=4)]
    assert many == [(reader.fetch(i).url, reader.fetch(i).read()) for i in indices]


def test_missing_object_raises_naming_its_url(mem_url):
    reader = ObjectReader(list_prefix(mem_url))
    pfio.from_url(mem_url).remove("d1/obj-03.bin")
    with pytest.raises(FileNotFoundError, match="d1/obj-03.bin"):
        list(reader.fetch_many(range(len(reader))))


def test_index_out_of_range(mem_url):
    reader = ObjectReader(list_prefix(mem_url))
    with pytest.raises(IndexError, match="6 objects"):
        reader.object(6)


# -- fetching ahead -----------------------------------------------------------------------

def test_fetch_ahead_keeps_the_order_of_uneven_fetches():
    def slow_for_even(i):
        if i % 2 == 0:
            time.sleep(0.002)
        return i * 10

    assert list(fetch_ahead(slow_for_even, range(40), window=8)) == [i * 10 for i in range(40)]


def test_fetch_ahead_holds_at_most_window_items_ahead():
    lock, started = threading.Lock(), [0]

    def fetch(i):
        with lock:
            started[0] += 1
        return i

    ahead = []
    for consumed, _ in enumerate(fetch_ahead(fetch, range(50), window=5)):
        with lock:
            ahead.append(started[0] - consumed)
    assert max(ahead) <= 5


def test_fetch_ahead_raises_at_the_failing_items_turn():
    def fetch(i):
        if i == 3:
            raise FileNotFoundError(f"object {i}")
        return i

    got = []
    with pytest.raises(FileNotFoundError, match="object 3"):
        for value in fetch_ahead(fetch, range(10), window=4):
            got.append(value)
    assert got == [0, 1, 2]


# -- S3 -----------------------------------------------------------------------------------

@pytest.fixture
def s3_url(s3_env, s3_bucket):
    write(pfio.from_url(f"s3://{s3_bucket}/train"))
    return f"s3://{s3_bucket}/train"


def test_s3_prefix_reads_every_object(s3_url):
    assert read_all(s3_url) == CONTENTS


def test_s3_key_is_the_full_key_and_bucket_the_bucket(s3_url, s3_bucket):
    obj = ObjectReader(list_prefix(s3_url + "/")).fetch(0)
    assert (obj.bucket, obj.key, obj.url) == \
        (s3_bucket, "train/d0/obj-00.bin", f"{s3_url}/d0/obj-00.bin")


def test_s3_whole_read_is_one_get_and_no_head(s3_url, s3_bucket, s3_requests):
    reader = ObjectReader(list_prefix(s3_url))
    log = s3_requests(pfio.from_url(f"s3://{s3_bucket}"))
    fetched = [o.read() for o in reader.fetch_many(range(len(reader)))]
    lazy = [reader.object(i) for i in range(len(reader))]
    sizes = [o.size for o in lazy]  # from the listing: nothing sent
    assert [o.read() for o in lazy] == fetched
    assert sizes == [len(d) for d in fetched]
    assert sorted(method for method, _, _ in log) == ["GET"] * (2 * len(reader))
    assert all(rng is None for _, _, rng in log)


def test_s3_large_object_read_whole_is_one_get(s3_env, s3_bucket, s3_requests):
    big = bytes(range(256)) * (6 << 10)  # 1.5 MiB: more than the opening GET's first part
    with pfio.open_url(f"s3://{s3_bucket}/big/x.bin", "wb") as f:
        f.write(big)
    reader = ObjectReader(list_prefix(f"s3://{s3_bucket}/big"))
    log = s3_requests(pfio.from_url(f"s3://{s3_bucket}"))
    assert reader.fetch(0).read() == big
    assert [method for method, _, _ in log] == ["GET"]


def test_s3_partial_prefix(s3_url):
    objects = list_prefix(f"{s3_url}/d0/obj-0")
    assert [objects.name(i) for i in range(len(objects))] == \
        ["obj-00.bin", "obj-02.bin", "obj-04.bin"]


def test_s3_empty_prefix_is_a_clear_value_error(s3_env, s3_bucket):
    with pytest.raises(ValueError, match="no objects found under s3://.*/nothing/"):
        list_prefix(f"s3://{s3_bucket}/nothing/")


def test_zip_on_s3_and_a_directory_inside_it(s3_env, s3_bucket):
    with pfio.from_url(f"s3://{s3_bucket}").open_zip("train.zip", "w") as archive:
        write(archive)
    assert read_all(f"s3://{s3_bucket}/train.zip") == CONTENTS
    obj = ObjectReader(list_prefix(f"s3://{s3_bucket}/train.zip/d1")).fetch(0)
    assert (obj.key, obj.read()) == ("train.zip/d1/obj-01.bin", CONTENTS["d1/obj-01.bin"])


def test_s3_options_reach_the_filesystem(s3_env, s3_bucket, monkeypatch):
    write(pfio.from_url(f"s3://{s3_bucket}/p"))
    monkeypatch.delenv("S3_ENDPOINT")
    assert read_all(f"s3://{s3_bucket}/p", endpoint=s3_env) == CONTENTS


# -- the readers' plan --------------------------------------------------------------------

@pytest.mark.parametrize("count", [10, 11, 3])
def test_even_plan_gives_every_rank_as_many_objects(count):
    plans = [reader_plan(count, rank=r, world_size=4) for r in range(4)]
    assert len({len(p) for p in plans}) == 1
    assert set(np.concatenate(plans)) == set(range(count))


def test_uneven_plan_reads_each_object_once_across_ranks_and_workers():
    plans = [reader_plan(11, rank=r, world_size=2, worker=w, num_workers=3, even=False,
                         shuffle=True, seed=4) for r in range(2) for w in range(3)]
    assert sorted(np.concatenate(plans).tolist()) == list(range(11))


def test_padding_repeats_the_order_from_its_start():
    assert [reader_plan(5, rank=r, world_size=4).tolist() for r in range(4)] == \
        [[0, 4], [1, 0], [2, 1], [3, 2]]


def test_shuffled_plan_depends_on_seed_and_epoch_only():
    plan = reader_plan(50, shuffle=True, seed=1, epoch=2)
    assert (plan == reader_plan(50, shuffle=True, seed=1, epoch=2)).all()
    assert not (plan == reader_plan(50, shuffle=True, seed=1, epoch=3)).all()
    assert sorted(plan.tolist()) == list(range(50))


def test_plan_refuses_a_rank_outside_the_world():
    with pytest.raises(ValueError, match="rank 2"):
        reader_plan(5, rank=2, world_size=2)


# -- image datasets over non-images -------------------------------------------------------

def test_image_items_of_non_images_point_to_object_datasets(mem_url):
    with pytest.raises(ValueError, match="no images.*6 files.*PfioObjectDataset"):
        collect(mem_url)
