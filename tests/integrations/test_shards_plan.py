"""Placement, even epochs and resumable streams, without PyTorch
(pfio.integrations.shards.plan, .shuffle and .stream)."""

import random
import sys

import pytest

from pfio.integrations.shards import (
    Place,
    Position,
    SampleStream,
    ShardWriter,
    ShuffleBuffer,
    epoch_order,
    even_targets,
    padding_items,
    reader_items,
)


def test_every_item_goes_to_exactly_one_reader():
    items = list(range(11))
    seen = [i for r in range(2) for w in range(3) for i in reader_items(items, Place(r, 2, w, 3))]
    assert sorted(seen) == items


def test_a_ranks_first_item_is_its_worker_zeros():
    items = list("abcdefg")
    assert reader_items(items, Place(1, 2, 0, 2))[0] == "b"
    assert reader_items(items, Place(1, 2, 1, 2)) == ["d"]


def test_epoch_order_is_deterministic_and_changes_with_the_epoch():
    items = list(range(20))
    assert epoch_order(items, 3, 1, True) == epoch_order(items, 3, 1, True)
    assert epoch_order(items, 3, 1, True) != epoch_order(items, 3, 2, True)
    assert epoch_order(items, 3, 1, False) == items


def test_even_targets_take_the_largest_worker_of_each_index():
    # rank 0: items 0, 2 (worker 0: 0, worker 1: 2); rank 1: item 1 (worker 0), nothing
    counts = [5, 9, 2]
    assert even_targets([0, 1, 2], counts, Place(0, 2, 0, 2)) == [9, 2]
    assert even_targets([0, 1, 2], counts, Place(0, 2, 0, 1)) == [9]


def test_even_targets_need_an_item_per_rank():
    with pytest.raises(ValueError, match="each rank needs one"):
        even_targets([0], [3], Place(0, 2))


def test_a_reader_without_items_pads_from_its_ranks():
    assert padding_items(["a", "b", "c"], Place(1, 2, 1, 2)) == ["b"]
    assert padding_items(["a", "b", "c"], Place(0, 2, 1, 2)) == ["c"]


def test_place_and_position_are_checked_and_round_trip():
    with pytest.raises(ValueError):
        Place(2, 2)
    with pytest.raises(ValueError):
        Place(0, 1, 1, 1)
    position = Position(3, 4, 5120)
    assert Position.from_dict(position.to_dict()) == position


def test_the_shuffle_buffer_holds_size_items_and_gives_all_back():
    buffer = ShuffleBuffer(4, random.Random(0))
    pushed = [buffer.push(i) for i in range(10)]
    assert pushed[:3] == [None] * 3 and None not in pushed[3:]  # one out per push once full
    assert len(buffer.items) == 3
    out = pushed[3:] + list(buffer.drain())
    assert sorted(out) == list(range(10)) and out != list(range(10))


# -- SampleStream -----------------------------------------------------------------------------

@pytest.fixture
def shards(tmp_path):
    with ShardWriter(str(tmp_path / "s-%02d.tar"), maxcount=5) as sink:
        for i in range(13):
            sink.write({"__key__": f"{i:03d}", "txt": f"t{i}"})
    return sink.shards  # 5, 5 and 3 samples


def _keys(stream):
    return [s["__key__"] for s in stream]


def test_a_stream_yields_its_shards_in_order(shards):
    assert _keys(SampleStream(shards)) == [f"{i:03d}" for i in range(13)]


def test_a_target_pads_by_repeating_from_the_start(shards):
    keys = _keys(SampleStream(shards[2:], padding=shards[2:], target=8))
    assert keys == ["010", "011", "012", "010", "011", "012", "010", "011"]


def test_a_target_below_the_samples_stops_there(shards):
    assert _keys(SampleStream(shards, target=7)) == [f"{i:03d}" for i in range(7)]


def test_a_stale_count_is_an_error(shards):
    stream = SampleStream(shards[:1], expected={shards[0]: 4})
    with pytest.raises(ValueError, match="recorded count is 4"):
        _keys(stream)


def test_padding_from_empty_shards_is_an_error(tmp_path):
    empty = tmp_path / "empty.tar"
    empty.write_bytes(bytes(10240))
    with pytest.raises(ValueError, match="hold no samples"):
        _keys(SampleStream([], padding=[str(empty)], target=2))


def test_a_decoder_and_a_transform_apply_in_order(shards):
    stream = SampleStream(shards[:1], decoder=lambda s: {**s, "txt": s["txt"].decode()},
                          transform=lambda s: s["txt"])
    assert list(stream) == [f"t{i}" for i in range(5)]


@pytest.mark.parametrize("buffer", [0, 4, 50])
@pytest.mark.parametrize("stop", [0, 1, 6, 12, 13])
def test_a_resumed_stream_gives_exactly_the_rest(shards, buffer, stop):
    def make():
        return SampleStream(shards, padding=shards, target=15, shuffle_buffer=buffer,
                            rng_seed="s")
    full = _keys(make())
    first = make()
    head = [next(first)["__key__"] for _ in range(stop)]
    resumed = make()
    resumed.load_state_dict(first.state_dict())
    assert head + _keys(resumed) == full


def test_resuming_skips_finished_shards_without_reading_them(shards):
    opened = []

    def read(url, resume):
        from pfio.integrations.shards import iter_samples

        opened.append((url, resume))
        return iter_samples(url, resume)

    first = SampleStream(shards, read=read)
    for _ in range(7):
        next(first)
    state = first.state_dict()
    opened.clear()
    resumed = SampleStream(shards, read=read)
    resumed.load_state_dict(state)
    assert _keys(resumed)[0] == "007"
    assert opened[0][0] == shards[1] and opened[0][1] > 0  # seeks into the second shard
    assert shards[0] not in [url for url, _ in opened]


def test_state_is_plain_data(shards):
    stream = SampleStream(shards, shuffle_buffer=3)
    next(stream)
    state = stream.state_dict()

    def plain(value):
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, (int, float, bool))
    assert plain(state)


def test_state_loads_only_before_iterating(shards):
    stream = SampleStream(shards)
    next(stream)
    with pytest.raises(RuntimeError):
        stream.load_state_dict(stream.state_dict())


def test_the_shards_package_imports_no_torch():
    import subprocess

    code = ("import sys, pfio.integrations.shards; "
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
