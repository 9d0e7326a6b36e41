"""Reading shards front to back and grouping members into samples
(pfio.integrations.shards.reader over pfio.containers.tar_format)."""

import gzip
import io
import tarfile
import zipfile

import pytest

import pfio
from pfio.errors import ArchiveError
from pfio.integrations.shards import iter_members, iter_samples, split_name
from pfio.integrations.shards.reader import stream_members

wds = pytest.importorskip("webdataset")


def _tar(members, fmt=tarfile.PAX_FORMAT, dirs=()):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for name in dirs:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _put(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _samples(url, start=0):
    return [sample for _, sample in iter_samples(url, start)]


def _wds(urls):
    dataset = wds.WebDataset(urls, shardshuffle=False, empty_check=False)
    return [{k: v for k, v in s.items() if k != "__local_path__"} for s in dataset]


def test_consecutive_members_with_one_key_form_a_sample(tmp_path):
    url = _put(tmp_path, "s.tar", _tar([("d/a.jpg", b"J"), ("d/a.CLS", b"1"),
                                        ("d/a.seg.png", b"P"), ("d/b.jpg", b"K")]))
    assert _samples(url) == [
        {"__key__": "d/a", "__url__": url, "jpg": b"J", "cls": b"1", "seg.png": b"P"},
        {"__key__": "d/b", "__url__": url, "jpg": b"K"}]


def test_split_name_follows_webdataset():
    assert split_name("a/b.c/d.seg.PNG") == ("a/b.c/d", "seg.png")
    assert split_name("noext") is None
    assert split_name(".hidden.txt") is None
    assert split_name("dir/.hidden.txt") is None  # webdataset would make the key "dir/"
    assert split_name("__meta__/x.json") is None
    assert split_name("__index__") is None
    assert split_name("__a.json") == ("__a", "json")


def test_directories_hidden_files_and_metadata_are_skipped(tmp_path):
    url = _put(tmp_path, "s.tar", _tar(
        [("__meta__/info.json", b"{}"), ("README", b"r"), ("d/.x.txt", b"h"),
         ("d/k.txt", b"t")], dirs=["d/"]))
    assert _samples(url) == [{"__key__": "d/k", "__url__": url, "txt": b"t"}]


def test_a_duplicate_extension_in_one_key_is_an_error(tmp_path):
    url = _put(tmp_path, "dup.tar", _tar([("a.jpg", b"1"), ("a.JPG", b"2")]))
    with pytest.raises(ValueError, match="duplicate extension 'jpg'") as info:
        _samples(url)
    assert url in str(info.value)


def test_the_same_key_apart_gives_two_samples(tmp_path):
    url = _put(tmp_path, "s.tar", _tar([("a.jpg", b"1"), ("b.jpg", b"2"), ("a.cls", b"3")]))
    assert [s["__key__"] for s in _samples(url)] == ["a", "b", "a"]


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT])
def test_long_and_non_ascii_names(tmp_path, fmt):
    key = "d" * 150 + "/é" + "x" * 120
    url = _put(tmp_path, "long.tar", _tar([(f"{key}.txt", b"t"), (f"{key}.cls", b"4")], fmt))
    assert _samples(url) == [{"__key__": key, "__url__": url, "txt": b"t", "cls": b"4"}]


def test_members_larger_than_a_read_chunk(tmp_path, monkeypatch):
    from pfio.containers import tar_sources

    monkeypatch.setattr(tar_sources, "CHUNK", 4096)
    big = bytes(range(256)) * 100  # 25,600 bytes: several chunks
    url = _put(tmp_path, "big.tar", _tar([("a.bin", big), ("a.txt", b"x"), ("b.bin", big)]))
    assert [s["bin"] for s in _samples(url)] == [big, big]


def test_webdataset_tar_writer_shards_read_the_same(tmp_path):
    path = str(tmp_path / "w.tar")
    with wds.TarWriter(path) as sink:
        for i in range(20):
            sink.write({"__key__": f"k/{i:03d}", "txt": f"text {i}", "cls": i, "json": {"i": i}})
    assert _samples(path) == _wds(path)


def test_webdataset_shard_writer_shards_read_the_same(tmp_path):
    pattern = str(tmp_path / "w-%02d.tar")
    with wds.ShardWriter(pattern, maxcount=7, verbose=0) as sink:
        for i in range(20):
            sink.write({"__key__": f"{i:03d}", "bin": bytes([i]) * 700, "cls": i})
    urls = [pattern % i for i in range(3)]
    assert [s for u in urls for s in _samples(u)] == _wds(urls)


def test_gzip_compressed_shards(tmp_path):
    data = _tar([(f"{i}.txt", b"t" * i) for i in range(1, 6)])
    url = _put(tmp_path, "s.tar.gz", gzip.compress(data))
    assert [s["txt"] for s in _samples(url)] == [b"t" * i for i in range(1, 6)]
    assert _samples(url) == _wds(url)


def test_gzip_is_recognised_by_its_magic_bytes(tmp_path):
    url = _put(tmp_path, "s.tar", gzip.compress(_tar([("a.txt", b"1")])))
    assert [s["txt"] for s in _samples(url)] == [b"1"]


def test_zip_shards_are_read_in_archive_order(tmp_path):
    path = tmp_path / "s.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in [("z/b.jpg", b"B"), ("z/b.cls", b"2"), ("a.jpg", b"A")]:
            z.writestr(name, data)
    assert _samples(str(path)) == [
        {"__key__": "z/b", "__url__": str(path), "jpg": b"B", "cls": b"2"},
        {"__key__": "a", "__url__": str(path), "jpg": b"A"}]


def test_a_shard_of_npy_members(tmp_path):
    np = pytest.importorskip("numpy")
    arrays = [np.arange(i + 1, dtype=np.float32) for i in range(3)]
    members = []
    for i, a in enumerate(arrays):
        out = io.BytesIO()
        np.save(out, a)
        members.append((f"{i}.npy", out.getvalue()))
    url = _put(tmp_path, "npy.tar", _tar(members))
    got = [np.load(io.BytesIO(s["npy"])) for s in _samples(url)]
    assert all((g == a).all() for g, a in zip(got, arrays, strict=True)) and len(got) == 3


def test_shards_on_other_filesystems(request):
    url = f"mem://shards-{request.node.name}/s.tar"
    with pfio.open_url(url, "wb") as f:
        f.write(_tar([("a.txt", b"1")]))
    assert _samples(url) == [{"__key__": "a", "__url__": url, "txt": b"1"}]


@pytest.mark.parametrize("name,compress", [("s.tar", False), ("s.tar.gz", True)])
def test_reading_resumes_at_a_sample_position(tmp_path, name, compress):
    data = _tar([(f"{i}.{ext}", b"%d" % i) for i in range(5) for ext in ("a", "b")])
    url = _put(tmp_path, name, gzip.compress(data) if compress else data)
    located = list(iter_samples(url))
    position = located[3][0]
    assert [s["__key__"] for s in _samples(url, position)] == ["3", "4"]


def test_zip_reading_resumes_at_a_member_index(tmp_path):
    path = tmp_path / "s.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(4):
            z.writestr(f"{i}.txt", b"%d" % i)
    located = list(iter_samples(str(path)))
    assert [s["__key__"] for s in _samples(str(path), located[2][0])] == ["2", "3"]


def test_a_gzip_shard_padded_with_zeros_reads(tmp_path):
    url = _put(tmp_path, "s.tar.gz", gzip.compress(_tar([("a.txt", b"1")])) + bytes(4096))
    assert _samples(url) == [{"__key__": "a", "__url__": url, "txt": b"1"}]


def test_resuming_past_the_end_of_a_gzip_shard_is_an_error(tmp_path):
    data = _tar([("a.txt", b"1")])
    url = _put(tmp_path, "s.tar.gz", gzip.compress(data))
    with pytest.raises(ArchiveError, match=f"{url}: truncated archive: it ends at position "
                       f"{len(data)}, before the position {len(data) + 512}"):
        _samples(url, len(data) + 512)


def test_a_stream_resumes_at_a_position_by_reading_on(tmp_path):
    data = _tar([("a.txt", b"1"), ("b.txt", b"2")])
    members = list(stream_members(_OneWay(data), "s.tar", 1024))
    assert [(m.name, m.data) for m in members] == [("b.txt", b"2")]


class _OneWay(io.RawIOBase):
    """``data`` as a stream that cannot seek (a network body)."""

    def __init__(self, data):
        self._data = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        return self._data.readinto(b)


# -- damaged shards ------------------------------------------------------------------------

def _partial_samples(url):
    got = []
    with pytest.raises(ArchiveError) as info:
        for _, sample in iter_samples(url):
            got.append(sample)
    assert url in str(info.value)
    return got, str(info.value)


def test_a_shard_cut_inside_a_member_raises_and_yields_no_partial_sample(tmp_path):
    data = _tar([("a.jpg", b"1" * 600), ("a.cls", b"1"), ("b.jpg", b"2" * 2000),
                 ("b.txt", b"2" * 700)], tarfile.USTAR_FORMAT)
    url = _put(tmp_path, "cut.tar", data[:512 * 11 + 100])  # inside b.txt's data
    got, message = _partial_samples(url)
    assert [s["__key__"] for s in got] == ["a"]
    assert "truncated" in message


def test_a_shard_cut_between_members_raises_before_the_last_sample(tmp_path):
    data = _tar([("a.jpg", b"1"), ("a.cls", b"1"), ("b.jpg", b"2"), ("b.cls", b"2")],
                tarfile.USTAR_FORMAT)
    url = _put(tmp_path, "cut.tar", data[:512 * 6])  # b.jpg whole, b.cls and the end gone
    got, message = _partial_samples(url)
    assert [s["__key__"] for s in got] == ["a"]
    assert "end-of-archive" in message


def test_a_shard_cut_inside_a_header(tmp_path):
    data = _tar([("a.txt", b"1"), ("b.txt", b"2")], tarfile.USTAR_FORMAT)
    url = _put(tmp_path, "cut.tar", data[:1024 + 200])
    _, message = _partial_samples(url)
    assert "cut short" in message


def test_a_corrupt_header_names_the_shard_and_the_offset(tmp_path):
    data = bytearray(_tar([("a.txt", b"1"), ("b.txt", b"2")], tarfile.USTAR_FORMAT))
    data[1024 + 10] ^= 0xFF  # b.txt's header: the checksum no longer matches
    url = _put(tmp_path, "bad.tar", bytes(data))
    _, message = _partial_samples(url)
    assert "corrupt tar header at offset 1024" in message


def test_bytes_that_are_not_a_tar(tmp_path):
    url = _put(tmp_path, "junk.tar", b"this is not a tar archive" * 40)
    _, message = _partial_samples(url)
    assert "corrupt" in message


def test_an_empty_file(tmp_path):
    url = _put(tmp_path, "empty.tar", b"")
    _, message = _partial_samples(url)
    assert "empty" in message


def test_a_truncated_gzip_shard(tmp_path):
    data = gzip.compress(_tar([(f"{i}.bin", bytes([i]) * 3000) for i in range(10)]))
    url = _put(tmp_path, "cut.tar.gz", data[:len(data) // 2])
    _, message = _partial_samples(url)
    assert "truncated" in message


def test_a_gzip_shard_with_a_wrong_checksum(tmp_path):
    data = bytearray(gzip.compress(_tar([("a.txt", b"1")])))
    data[-8] ^= 0xFF  # the CRC-32 of the trailer
    url = _put(tmp_path, "crc.tar.gz", bytes(data))
    _, message = _partial_samples(url)
    assert "corrupt" in message


def test_a_missing_shard_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(iter_members(str(tmp_path / "missing.tar")))
