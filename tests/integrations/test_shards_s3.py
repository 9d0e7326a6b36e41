"""Shards on S3 (a moto server over real HTTP): one GET per tar shard, the shard's bytes and
no more, and shards written and read there."""

import pytest

import pfio
from pfio import trace
from pfio.integrations.shards import ShardWriter, iter_samples, shard_counts

pytest.importorskip("boto3")


@pytest.fixture
def tracer():
    trace.disable()
    trace.reset()
    trace.enable()
    yield trace
    trace.disable()
    trace.reset()


def _write(base, count=3, per_shard=40, payload=20_000, suffix="tar"):
    with ShardWriter(f"{base}/train-%04d.{suffix}", maxcount=per_shard) as sink:
        for i in range(count * per_shard):
            sink.write({"__key__": f"c{i % 4}/{i:05d}", "bin": bytes([i % 256]) * payload,
                        "cls": i % 4})
    return sink.shards


@pytest.mark.parametrize("suffix", ["tar", "tar.gz"])
def test_a_tar_shard_costs_one_get_of_exactly_its_bytes(s3_env, s3_bucket, s3_requests,
                                                        tracer, suffix):
    base = f"s3://{s3_bucket}/shards"
    shards = _write(base, suffix=suffix)
    fs = pfio.from_url(base)
    sizes = {url: fs.stat(url.rsplit("/", 1)[1]).size for url in shards}
    log = s3_requests(fs)
    tracer.reset()
    samples = [s for url in shards for _, s in iter_samples(url)]
    assert len(samples) == 120
    gets = [(path, rng) for method, path, rng in log if method == "GET"]
    assert sorted(path for path, _ in gets) == sorted(
        f"/{s3_bucket}/shards/{url.rsplit('/', 1)[1]}" for url in shards)
    assert all(rng is None for _, rng in gets)  # plain GETs of the whole objects
    assert [method for method, _, _ in log] == ["GET"] * len(shards)
    got = tracer.metrics().requests[("s3", "GET")]
    assert (got.count, got.bytes) == (len(shards), sum(sizes.values()))


def test_pfio_shards_on_s3_read_as_written(s3_env, s3_bucket):
    shards = _write(f"s3://{s3_bucket}/w", count=2, per_shard=5, payload=10)
    keys = [s["__key__"] for url in shards for _, s in iter_samples(url)]
    assert keys == [f"c{i % 4}/{i:05d}" for i in range(10)]


def test_webdataset_shards_uploaded_to_s3_read_as_webdataset_reads_them(s3_env, s3_bucket,
                                                                         tmp_path):
    wds = pytest.importorskip("webdataset")
    local = str(tmp_path / "w.tar")
    with wds.TarWriter(local) as sink:
        for i in range(12):
            sink.write({"__key__": f"k{i:02d}", "txt": f"t{i}", "cls": i})
    url = f"s3://{s3_bucket}/w.tar"
    with open(local, "rb") as src, pfio.open_url(url, "wb") as dst:
        dst.write(src.read())
    theirs = [{k: v for k, v in s.items() if k not in ("__local_path__", "__url__")}
              for s in wds.WebDataset(local, shardshuffle=False, empty_check=False)]
    ours = [{k: v for k, v in s.items() if k != "__url__"} for _, s in iter_samples(url)]
    assert ours == theirs


def test_counts_come_from_the_index_with_one_get(s3_env, s3_bucket, s3_requests):
    base = f"s3://{s3_bucket}/c"
    shards = _write(base, count=2, per_shard=7, payload=10)
    log = s3_requests(pfio.from_url(base))
    counts = shard_counts(shards)
    assert [counts[u].samples for u in shards] == [7, 7]
    assert [(method, path) for method, path, _ in log] == [
        ("GET", f"/{s3_bucket}/c/pfio-index.json")]


def test_old_count_sidecars_are_read_with_one_small_get_each(s3_env, s3_bucket, s3_requests):
    base = f"s3://{s3_bucket}/old"
    with ShardWriter(f"{base}/train-%04d.tar", maxcount=7, sidecar=True, index=False) as sink:
        for i in range(14):
            sink.write({"__key__": f"{i:05d}", "cls": i})
    log = s3_requests(pfio.from_url(base))
    counts = shard_counts(sink.shards)
    assert [counts[u].samples for u in sink.shards] == [7, 7]
    assert sorted(path for _, path, _ in log if path.endswith(".count.json")) == sorted(
        f"/{s3_bucket}/old/{u.rsplit('/', 1)[1]}.count.json" for u in sink.shards)


def test_a_zip_shard_on_s3_is_read_member_by_member(s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/z.zip"
    with pfio.from_url(f"s3://{s3_bucket}").open_zip("z.zip", "w") as archive:
        for i in range(3):
            with archive.open(f"k{i}.txt", "wb") as f:
                f.write(b"%d" % i)
    assert [s["txt"] for _, s in iter_samples(url)] == [b"0", b"1", b"2"]


def test_resuming_inside_a_shard_does_not_download_it_again(s3_env, s3_bucket, s3_requests):
    shards = _write(f"s3://{s3_bucket}/r", count=1, per_shard=100, payload=50_000)
    located = list(iter_samples(shards[0]))
    position = located[90][0]
    log = s3_requests(pfio.from_url(f"s3://{s3_bucket}/r"))
    assert [s["__key__"] for _, s in iter_samples(shards[0], position)] == \
        [f"c{i % 4}/{i:05d}" for i in range(90, 100)]
    sent = list(log)
    size = pfio.from_url(f"s3://{s3_bucket}/r").stat("train-0000.tar").size
    # the first 512 bytes (gzip or not?), then the rest from the position on
    assert [(method, rng) for method, _, rng in sent] == [
        ("GET", "bytes=0-511"), ("GET", f"bytes={position}-{size - 1}")]
