"""Writing shards (pfio.integrations.shards.writer): rolling, atomic publishing,
deterministic bytes, and shards webdataset reads."""

import json
import os

import numpy as np
import pytest

from pfio.integrations.shards import (
    ShardWriter,
    TarShardWriter,
    iter_samples,
    read_sidecar,
    sidecar_url,
)

wds = pytest.importorskip("webdataset")


def _sample(i, payload=100):
    return {"__key__": f"d/{i:04d}", "bin": bytes([i % 256]) * payload, "cls": i % 3,
            "json": {"i": i}, "txt": f"t{i}"}


def _tars(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tar"))


def test_shards_roll_at_maxcount(tmp_path):
    with ShardWriter(str(tmp_path / "s-%03d.tar"), maxcount=4) as sink:
        for i in range(10):
            sink.write(_sample(i))
    assert sink.shards == [str(tmp_path / f"s-{i:03d}.tar") for i in range(3)]
    assert [len(list(iter_samples(u))) for u in sink.shards] == [4, 4, 2]


def test_shards_roll_before_passing_maxsize(tmp_path):
    # a sample takes 4 headers + 5 data blocks (the 1000-byte member takes two): 9 blocks
    with ShardWriter(str(tmp_path / "s-%03d.tar"), maxsize=18 * 512) as sink:
        for i in range(5):
            sink.write(_sample(i, payload=1000))
    assert [len(list(iter_samples(u))) for u in sink.shards] == [2, 2, 1]
    for url in sink.shards:  # 2 samples + the end blocks and record padding
        assert os.path.getsize(url) == 10240


def test_a_sample_larger_than_maxsize_gets_a_shard_of_its_own(tmp_path):
    with ShardWriter(str(tmp_path / "s-%03d.tar"), maxsize=1000) as sink:
        for i in range(2):
            sink.write(_sample(i, payload=5000))
    assert [len(list(iter_samples(u))) for u in sink.shards] == [1, 1]


def test_values_are_encoded_by_extension_and_read_back(tmp_path):
    array = np.arange(6, dtype=np.int16).reshape(2, 3)
    with TarShardWriter(str(tmp_path / "s.tar")) as sink:
        sink.write({"__key__": "a", "cls": 7, "json": {"x": 1}, "npy": array, "txt": "é",
                    "bin": b"\0\1"})
    (_, sample), = iter_samples(str(tmp_path / "s.tar"))
    assert (sample["cls"], sample["json"], sample["txt"], sample["bin"]) == (
        b"7", b'{"x": 1}', "é".encode(), b"\0\1")
    assert np.array_equal(np.load(__import__("io").BytesIO(sample["npy"])), array)


def test_members_are_written_in_sorted_extension_order(tmp_path):
    import tarfile

    with TarShardWriter(str(tmp_path / "s.tar")) as sink:
        sink.write({"__key__": "a", "txt": "t", "cls": 1, "bin": b"b", "__url__": "ignored"})
    with tarfile.open(tmp_path / "s.tar") as tar:
        assert tar.getnames() == ["a.bin", "a.cls", "a.txt"]


def test_the_same_samples_give_the_same_bytes(tmp_path):
    for name in ("a", "b"):
        with ShardWriter(str(tmp_path / f"{name}-%d.tar.gz"), maxcount=3) as sink:
            for i in range(5):
                sink.write(_sample(i))
    for i in range(2):
        assert (tmp_path / f"a-{i}.tar.gz").read_bytes() == \
            (tmp_path / f"b-{i}.tar.gz").read_bytes()


def test_headers_are_fixed(tmp_path):
    import tarfile

    with TarShardWriter(str(tmp_path / "s.tar")) as sink:
        sink.write(_sample(0))
    with tarfile.open(tmp_path / "s.tar") as tar:
        for info in tar.getmembers():
            assert (info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode) == \
                (0, 0, 0, "", "", 0o444)


def test_an_exception_inside_with_publishes_nothing_partial(tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        with ShardWriter(str(tmp_path / "s-%03d.tar"), maxcount=3) as sink:
            for i in range(5):
                sink.write(_sample(i))
            raise RuntimeError("boom")
    assert _tars(tmp_path) == ["s-000.tar"]  # the full shard stays, the second never appears
    assert len(list(iter_samples(str(tmp_path / "s-000.tar")))) == 3
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())
    assert not os.path.exists(sidecar_url(str(tmp_path / "s-001.tar")))


def test_a_single_shard_writer_aborted_publishes_nothing(tmp_path):
    with pytest.raises(RuntimeError):
        with TarShardWriter(str(tmp_path / "one.tar")) as sink:
            sink.write(_sample(0))
            raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


def test_sidecars_are_written_only_when_asked(tmp_path):
    with ShardWriter(str(tmp_path / "s-%03d.tar"), maxcount=4) as sink:
        for i in range(6):
            sink.write(_sample(i))
    assert not any(p.name.endswith(".count.json") for p in tmp_path.iterdir())
    with ShardWriter(str(tmp_path / "old-%03d.tar"), maxcount=4, sidecar=True) as sink:
        for i in range(6):
            sink.write(_sample(i))
    counts = [read_sidecar(u) for u in sink.shards]
    assert [c.samples for c in counts] == [4, 2]
    assert [c.bytes for c in counts] == [os.path.getsize(u) for u in sink.shards]
    assert json.loads(open(sidecar_url(sink.shards[0])).read())["samples"] == 4


def test_shards_are_written_on_other_filesystems(request):
    base = f"mem://writer-{request.node.name}"
    with ShardWriter(f"{base}/s-%02d.tar", maxcount=2) as sink:
        for i in range(3):
            sink.write(_sample(i))
    assert sink.shards == [f"{base}/s-00.tar", f"{base}/s-01.tar"]
    assert [s["__key__"] for u in sink.shards for _, s in iter_samples(u)] == \
        ["d/0000", "d/0001", "d/0002"]


def test_webdataset_reads_pfio_shards_as_pfio_does(tmp_path):
    with ShardWriter(str(tmp_path / "s-%03d.tar"), maxcount=4) as sink:
        for i in range(10):
            sink.write(_sample(i))
    ours = [s for u in sink.shards for _, s in iter_samples(u)]
    theirs = [{k: v for k, v in s.items() if k != "__local_path__"}
              for s in wds.WebDataset(sink.shards, shardshuffle=False, empty_check=False)]
    assert theirs == ours and len(ours) == 10


def test_webdataset_reads_compressed_pfio_shards(tmp_path):
    with TarShardWriter(str(tmp_path / "s.tgz")) as sink:
        for i in range(3):
            sink.write(_sample(i))
    keys = [s["__key__"] for s in wds.WebDataset(str(tmp_path / "s.tgz"), shardshuffle=False,
                                                  empty_check=False)]
    assert keys == ["d/0000", "d/0001", "d/0002"]


@pytest.mark.parametrize("sample,match", [
    ({"bin": b"x"}, "__key__"),
    ({"__key__": "a.b", "bin": b"x"}, "read back"),
    ({"__key__": "a", "__url__": "u"}, "no fields"),
    ({"__key__": "a", "xyz": 3}, "no encoder"),
])
def test_samples_that_would_not_read_back_are_refused(tmp_path, sample, match):
    with TarShardWriter(str(tmp_path / "s.tar")) as sink:
        with pytest.raises(ValueError, match=match):
            sink.write(sample)


@pytest.mark.parametrize("pattern", ["s.tar", "s-%d-%d.tar"])
def test_a_pattern_needs_an_integer_field(tmp_path, pattern):
    with pytest.raises(ValueError, match="pattern"):
        ShardWriter(str(tmp_path / pattern))


def test_writing_after_close_is_an_error(tmp_path):
    sink = ShardWriter(str(tmp_path / "s-%d.tar"))
    sink.write(_sample(0))
    sink.close()
    with pytest.raises(ValueError, match="closed"):
        sink.write(_sample(1))
    assert sink.shards == [str(tmp_path / "s-0.tar")]
