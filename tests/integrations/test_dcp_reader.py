"""PfioReader's planned reads: items in (file, offset) order, coalesced into large ranged
GETs read in parallel; partial loads read only what they need (GETs counted on a moto S3
server)."""

import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.filesystem import _StorageInfo

import pfio
from pfio.integrations.torch.dcp import PfioReader, PfioWriter
from pfio.integrations.torch.dcp.reader import plan_reads


def _info(path, offset, length):
    return _StorageInfo(path, offset, length)


def test_plan_sorts_and_coalesces_adjacent_items():
    items = [("b", "x3", _info("b", 0, 10)), ("a", "x2", _info("a", 10, 10)),
             ("a", "x1", _info("a", 0, 10)), ("a", "x4", _info("a", 100, 10))]
    reads = plan_reads(items, read_size=1000, max_gap=0)
    assert [(r.path, r.start, r.end) for r in reads] == [("a", 0, 20), ("a", 100, 110),
                                                       ("b", 0, 10)]
    assert [item for item, _ in reads[0].items] == ["x1", "x2"]


def test_plan_reads_through_small_gaps_and_stops_at_read_size():
    items = [("a", i, _info("a", i * 12, 10)) for i in range(10)]  # gaps of 2 bytes
    assert len(plan_reads(items, read_size=1000, max_gap=2)) == 1
    assert len(plan_reads(items, read_size=1000, max_gap=1)) == 10
    assert [(r.start, r.end) for r in plan_reads(items, read_size=34, max_gap=2)] == \
        [(0, 34), (36, 70), (72, 106), (108, 118)]


def test_an_item_bigger_than_a_read_is_one_read():
    reads = plan_reads([("a", 1, _info("a", 0, 100))], read_size=10, max_gap=0)
    assert [(r.start, r.end) for r in reads] == [(0, 100)]


def _state(n=40, size=2048):
    """Model and optimizer tensors, interleaved in the checkpoint's file."""
    state = {}
    for i in range(n):
        state[f"model.w{i}"] = torch.full((size,), float(i))
        state[f"optim.w{i}"] = torch.full((size,), -float(i))
    return state


@pytest.fixture
def checkpoint(s3_env, s3_bucket, s3_requests):
    url = f"s3://{s3_bucket}/run/step-1"
    dcp.save(_state(), storage_writer=PfioWriter(url), no_dist=True)
    with pfio.from_url(f"s3://{s3_bucket}") as fs:
        log = s3_requests(fs)
    return url, log


def _data_gets(log):
    return [(path, rng) for method, path, rng in log
            if method == "GET" and path.endswith(".distcp")]


def _zeros(state):
    return {k: torch.zeros_like(v) for k, v in state.items()}


def test_a_load_of_many_items_is_one_get_per_file(checkpoint):
    url, log = checkpoint
    loaded = _zeros(_state())
    dcp.load(loaded, storage_reader=PfioReader(url), no_dist=True)
    assert all(torch.equal(loaded[k], v) for k, v in _state().items())
    assert len(_data_gets(log)) == 1  # 80 items: one GET


def test_reads_are_ranged_gets_in_parallel_pieces(checkpoint):
    url, log = checkpoint
    loaded = _zeros(_state())
    dcp.load(loaded, storage_reader=PfioReader(url, read_size=128 << 10), no_dist=True)
    assert all(torch.equal(loaded[k], v) for k, v in _state().items())
    gets = _data_gets(log)
    size = pfio.from_url(url).stat([p for p, _ in gets][0].rsplit("/", 1)[1]).size
    assert len(gets) <= size // (120 << 10) + 2  # ~128 KiB ranges, not one per item
    assert all(rng is not None for _, rng in gets[1:])


def test_a_partial_load_reads_only_the_items_it_asks_for(checkpoint):
    url, log = checkpoint
    state = _state()
    model = {k: torch.zeros_like(v) for k, v in state.items() if k.startswith("model.")}
    dcp.load(model, storage_reader=PfioReader(url), no_dist=True)
    assert all(torch.equal(model[k], state[k]) for k in model)
    gets = _data_gets(log)
    wanted = sum(v.numel() * v.element_size() for v in model.values())
    fetched = 0
    for _, rng in gets:
        first, last = rng.removeprefix("bytes=").split("-")
        fetched += int(last) - int(first) + 1
    assert wanted <= fetched < wanted * 1.5  # (each item carries its torch.save header)
    assert len(gets) <= len(model) + 1


def test_a_truncated_data_file_raises(tmp_path):
    url = str(tmp_path / "ckpt")
    dcp.save(_state(4), storage_writer=PfioWriter(url), no_dist=True)
    data = [p for p in (tmp_path / "ckpt").iterdir() if p.suffix == ".distcp"][0]
    data.write_bytes(data.read_bytes()[:-5000])
    with pytest.raises(BaseException, match="truncated"):
        dcp.load(_zeros(_state(4)), storage_reader=PfioReader(url), no_dist=True)


def test_bad_options_raise():
    with pytest.raises(ValueError, match="read_size"):
        PfioReader("mem://x/y", read_size=0)


def test_places_in_the_ring_never_overlap_live_ones():
    from pfio.integrations.torch.dcp.reader import _Ring

    ring = _Ring(100)
    a, b = ring.take(40), ring.take(40)
    assert ring.take(30) is None  # 20 free at the end, none before the oldest
    a[:] = b"a" * 40
    ring.give_back()  # a's place is free: the next wraps to the start
    c = ring.take(30)
    c[:] = b"c" * 30
    assert bytes(b) == bytes(40) and ring.take(11) is None and ring.take(10) is not None
    ring.give_back()
    ring.give_back()
    ring.give_back()
    assert len(ring.take(100)) == 100


def _mixed_state():
    return {"w": torch.randn(64, 32), "wt": torch.randn(32, 64).t(),
            "half": torch.randn(5000).to(torch.bfloat16),
            "steps": torch.arange(100, dtype=torch.int64), "empty": torch.zeros(0),
            "extra": {"epoch": 3, "name": "run"}}


def test_a_load_through_a_small_ring_is_exact(tmp_path):
    url = str(tmp_path / "ckpt")
    state = {**_state(), **_mixed_state()}
    dcp.save(state, storage_writer=PfioWriter(url, thread_count=3), no_dist=True)
    loaded = {k: torch.zeros_like(v) for k, v in state.items() if isinstance(v, torch.Tensor)}
    loaded["wt"] = torch.zeros(64, 32)
    loaded["extra"] = {"epoch": 0, "name": ""}
    # reads of ~24 KiB in a ring of 64 KiB: places wrap around many times
    dcp.load(loaded, storage_reader=PfioReader(url, read_size=24 << 10, max_gap=0,
                                               max_inflight=64 << 10, max_workers=3),
             no_dist=True)
    for key, value in state.items():
        if isinstance(value, torch.Tensor):
            assert loaded[key].dtype == value.dtype and torch.equal(loaded[key], value), key
    assert loaded["extra"] == {"epoch": 3, "name": "run"}
