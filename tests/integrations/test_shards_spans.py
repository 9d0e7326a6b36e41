"""Reading chosen samples of indexed shards (pfio.integrations.shards.spans): runs of a shard
in one read, neighbours merged, windows, and shards changed since they were indexed."""

import dataclasses

import pytest

from pfio.integrations.shards import ShardWriter, read_index
from pfio.integrations.shards.spans import SpanReader


def _write(base, n=30, maxcount=10, payload=1000, suffix="tar"):
    with ShardWriter(f"{base}/s-%03d.{suffix}", maxcount=maxcount) as sink:
        for i in range(n):
            sink.write({"__key__": f"{i:04d}", "bin": bytes([i]) * payload})
    return read_index(base)


def _keys(reader, ids):
    return [(g, s["__key__"]) for g, s in reader.read(ids)]


def test_a_run_of_consecutive_samples_is_one_read(tmp_path):
    index = _write(str(tmp_path))
    reader = SpanReader(index)
    assert _keys(reader, list(range(30))) == [(g, f"{g:04d}") for g in range(30)]
    assert reader.reads == 3  # one per shard


def test_samples_come_in_the_order_asked_with_repeats(tmp_path):
    index = _write(str(tmp_path))
    ids = [25, 3, 4, 3, 17, 0]
    assert _keys(SpanReader(index), ids) == [(g, f"{g:04d}") for g in ids]


def test_neighbours_closer_than_the_gap_share_a_read_others_do_not(tmp_path):
    index = _write(str(tmp_path), payload=100_000)  # ~100 kB per sample
    assert SpanReader(index, merge_gap=256 << 10).spans([0, 2, 9]) == [(0, [0, 2]), (0, [9])]
    assert SpanReader(index, merge_gap=0).spans([0, 1, 3]) == [(0, [0, 1]), (0, [3])]
    assert SpanReader(index, max_span=250_000).spans([0, 1, 2]) == [(0, [0, 1]), (0, [2])]


def test_windows_bound_the_samples_held(tmp_path):
    index = _write(str(tmp_path), payload=1000)
    windows = list(SpanReader(index, window=7).windows(list(range(30))))
    assert [len(w) for w in windows] == [7, 7, 7, 7, 2]
    windows = list(SpanReader(index, window_bytes=5000).windows(list(range(10))))
    assert [len(w) for w in windows] == [4, 4, 2]  # 1,536 bytes each: cut once 5,000 reached


def test_compressed_shards_are_streamed_to_the_samples_needed(tmp_path):
    index = _write(str(tmp_path), suffix="tar.gz")
    assert _keys(SpanReader(index), [12, 11, 29]) == [(12, "0012"), (11, "0011"), (29, "0029")]


def test_a_shard_rewritten_since_it_was_indexed_is_an_error(tmp_path):
    index = _write(str(tmp_path))
    with ShardWriter(str(tmp_path / "s-%03d.tar"), maxcount=10, index=False) as sink:
        for i in range(10):
            sink.write({"__key__": f"{i:04d}", "bin": b"short"})
    with pytest.raises(ValueError, match="changed since it was indexed"):
        list(SpanReader(index).read([5]))


def test_a_shard_whose_etag_changed_is_an_error(s3_env, s3_bucket):
    index = _write(f"s3://{s3_bucket}/etag")
    entry = dataclasses.replace(index.shards[0], etag="0123456789abcdef")
    index.shards[0] = entry
    with pytest.raises(ValueError, match="ETag"):
        list(SpanReader(index).read([1]))
