import pytest

from pfio.trace.stats import RAW_LIMIT, CacheStats, Metrics, OpStats


def stats_of(durations_ns, nbytes=0):
    s = OpStats()
    for d in durations_ns:
        s.add(d, nbytes)
    return s


def test_percentiles_are_within_a_few_percent():
    s = stats_of(range(1, 10001))
    assert s.p50 * 1e9 == pytest.approx(5000, rel=0.03)
    assert s.p90 * 1e9 == pytest.approx(9000, rel=0.03)
    assert s.p99 * 1e9 == pytest.approx(9900, rel=0.03)


def test_totals_survive_folding():
    s = stats_of([100] * (RAW_LIMIT + 10), nbytes=2)
    assert (s.count, s.ns, s.bytes) == (RAW_LIMIT + 10, 100 * (RAW_LIMIT + 10),
                                        2 * (RAW_LIMIT + 10))
    assert len(s.raw) < RAW_LIMIT


def test_zero_durations_are_counted():
    s = stats_of([0, 0])
    assert (s.count, s.p50) == (2, pytest.approx(0, abs=1e-9))


def test_an_empty_stat_has_zero_percentiles():
    assert OpStats().p99 == 0.0


def test_merging_adds_exactly():
    a, b = stats_of([10, 20], 1), stats_of([30] * 5000, 2)
    b.errors, b.retries, b.statuses = 1, 3, {"200": 5000}
    a.merge(b)
    assert (a.count, a.ns, a.bytes, a.errors, a.retries) == (5002, 150030, 10002, 1, 3)
    assert a.statuses == {"200": 5000}


def test_metrics_round_trip_through_a_dict():
    m = Metrics(operations={("mem", "open"): stats_of([5, 7, 9], 3)},
                requests={("s3", "GET"): stats_of([1000])},
                caches={"c": CacheStats()}, processes=[1, 2])
    m.caches["c"].add(True, 10, 5)
    back = Metrics.from_dict(m.to_dict())
    assert back.operations[("mem", "open")].count == 3
    assert back.operations[("mem", "open")].p50 == m.operations[("mem", "open")].p50
    assert back.requests[("s3", "GET")].ns == 1000
    assert back.caches["c"].hit_bytes == 10
    assert back.processes == [1, 2]


def test_merging_metrics_of_processes():
    a = Metrics(operations={("mem", "open"): stats_of([1])}, processes=[1])
    b = Metrics(operations={("mem", "open"): stats_of([1, 2])}, processes=[2])
    a.merge(b)
    assert a.operations[("mem", "open")].count == 3
    assert a.processes == [1, 2]


def test_a_malformed_dict_is_refused():
    with pytest.raises(ValueError, match="not pfio trace metrics"):
        Metrics.from_dict({"operations": [{"scheme": "x"}]})


def test_folding_with_numpy_fills_the_same_buckets_as_without(monkeypatch):
    import random
    import sys

    import numpy  # noqa: F401 - imported, so fold() uses it

    from pfio.trace.stats import fold

    rng = random.Random(6)
    raw = [0, 1, 2, 3, 255, 256, 1 << 20, (1 << 40) - 1]
    raw += [rng.randrange(1 << 36) for _ in range(5000)]
    with_numpy = {}
    fold(with_numpy, raw)
    monkeypatch.setitem(sys.modules, "numpy", None)
    without = {}
    fold(without, raw)
    assert with_numpy == without and sum(without.values()) == len(raw)


def test_folding_without_numpy_puts_each_duration_where_its_logarithm_does(monkeypatch):
    """The sorted fold (no NumPy) cuts at the buckets' first durations: every duration,
    those at and next to each bucket's edges included, lands in int(16 * log2(d + 1))."""
    import math
    import sys
    from collections import Counter

    from pfio.trace.stats import fold

    monkeypatch.setitem(sys.modules, "numpy", None)
    edges = [math.ceil(2 ** (b / 16)) - 1 for b in range(0, 16 * 40)]
    raw = [d + k for d in edges for k in (-1, 0, 1) if d + k >= 0] + list(range(3000))
    hist: dict[int, int] = {}
    fold(hist, raw)
    assert hist == Counter(int(math.log2(d + 1) * 16) for d in raw)
