"""One index per dataset (pfio.integrations.shards.index, .indexing): ShardWriter publishes
pfio-index.json on close, build_index makes one for other shards, and its spans are the
samples' bytes in the tar."""

import io
import json
import tarfile

import pytest

import pfio
from pfio.integrations.shards import (
    INDEX_NAME,
    ShardWriter,
    build_index,
    iter_samples,
    read_index,
    shard_counts,
)


def _sample(i, payload=300):
    return {"__key__": f"d/{i:04d}", "bin": bytes([i % 256]) * (payload + i), "cls": i % 3}


def _write(pattern, n, maxcount=4, **options):
    with ShardWriter(pattern, maxcount=maxcount, **options) as sink:
        for i in range(n):
            sink.write(_sample(i))
    return sink


def test_closing_publishes_one_index_and_no_sidecars(tmp_path):
    sink = _write(str(tmp_path / "s-%03d.tar"), 10)
    assert sink.index_url == str(tmp_path / INDEX_NAME)
    assert sorted(p.name for p in tmp_path.iterdir()) == [INDEX_NAME, "s-000.tar",
                                                          "s-001.tar", "s-002.tar"]
    record = json.loads((tmp_path / INDEX_NAME).read_text())
    assert [s["name"] for s in record["shards"]] == ["s-000.tar", "s-001.tar", "s-002.tar"]
    assert [s["samples"] for s in record["shards"]] == [4, 4, 2]
    assert [s["size"] for s in record["shards"]] == [
        (tmp_path / n).stat().st_size for n in ("s-000.tar", "s-001.tar", "s-002.tar")]


def test_each_span_holds_exactly_its_samples_members(tmp_path):
    sink = _write(str(tmp_path / "s-%03d.tar"), 6)
    index = read_index(str(tmp_path))
    for entry, url in zip(index.shards, sink.shards, strict=True):
        data = open(url, "rb").read()
        keys = [s["__key__"] for _, s in iter_samples(url)]
        for key, offset, length in zip(keys, entry.offsets, entry.lengths, strict=True):
            span = io.BytesIO(data[offset:offset + length] + bytes(1024))
            with tarfile.open(fileobj=span) as tar:
                assert sorted(tar.getnames()) == [f"{key}.bin", f"{key}.cls"]


def test_an_exception_inside_with_publishes_no_index(tmp_path):
    with pytest.raises(RuntimeError), ShardWriter(str(tmp_path / "s-%03d.tar")) as sink:
        sink.write(_sample(0))
        raise RuntimeError("stop")
    assert not (tmp_path / INDEX_NAME).exists()


def test_the_index_can_go_elsewhere_or_nowhere(tmp_path):
    (tmp_path / "a").mkdir()
    sink = _write(str(tmp_path / "a" / "s-%03d.tar"), 3, index=str(tmp_path / "all.json"))
    assert [e.name for e in read_index(sink.index_url).shards] == ["a/s-000.tar"]
    _write(str(tmp_path / "b-%03d.tar"), 3, index=False)
    assert not (tmp_path / INDEX_NAME).exists()
    with pytest.raises(ValueError, match="not under"):
        ShardWriter(str(tmp_path / "s-%03d.tar"), index=str(tmp_path / "a" / "i.json"))


@pytest.mark.parametrize("form", ["pattern", "list", "prefix"])
def test_build_index_over_other_shards_matches_the_writers(tmp_path, form):
    (tmp_path / "w").mkdir()
    sink = _write(str(tmp_path / "w" / "s-%03d.tar"), 9)
    written = read_index(sink.index_url)
    (tmp_path / "w" / INDEX_NAME).unlink()
    shards = {"pattern": str(tmp_path / "w" / "s-{000..002}.tar"), "list": sink.shards,
              "prefix": str(tmp_path / "w")}[form]
    url = build_index(shards)
    assert url == str(tmp_path / "w" / INDEX_NAME)
    built = read_index(url)
    assert [e.to_json() for e in built.shards] == [e.to_json() for e in written.shards]
    assert built.identity == written.identity


def test_build_index_of_compressed_shards_and_foreign_tars(tmp_path):
    _write(str(tmp_path / "z-%03d.tar.gz"), 5)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for key in ("x/a", "x/b"):
            for ext in ("txt", "json"):
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size = 3
                tar.addfile(info, io.BytesIO(b"abc"))
    (tmp_path / "gnu.tar").write_bytes(out.getvalue())
    index = read_index(build_index([str(tmp_path / "z-000.tar.gz"), str(tmp_path / "gnu.tar")]))
    gz, gnu = index.shards
    assert (gz.compressed, gz.samples, gnu.compressed, gnu.samples) == (True, 4, False, 2)
    assert gnu.offsets == [0, 2048] and gnu.lengths == [2048, 2048]  # 2 x (header + data)
    assert len(index) == 6 and index.locate(5) == (1, 1)


def test_build_index_refuses_zip_shards_and_shards_outside_it(tmp_path):
    _write(str(tmp_path / "s-%03d.tar"), 2)
    (tmp_path / "a.zip").write_bytes(b"")
    with pytest.raises(ValueError, match="zip"):
        build_index([str(tmp_path / "a.zip")])
    with pytest.raises(ValueError, match="not under"):
        build_index([str(tmp_path / "s-000.tar")], index_url=str(tmp_path / "sub" / "i.json"))
    with pytest.raises(ValueError, match="no shards"):
        build_index([])


def test_reading_a_missing_or_malformed_index_says_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / INDEX_NAME)):
        read_index(str(tmp_path))
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a pfio index"):
        read_index(str(tmp_path / "bad.json"))
    (tmp_path / "up.json").write_text(json.dumps({"format": "pfio-index", "version": 1, "shards": [
        {"name": "../x.tar", "size": 1, "samples": 0, "offsets": [], "lengths": []}]}))
    with pytest.raises(PermissionError, match="climbs out"):
        read_index(str(tmp_path / "up.json"))


def test_shard_counts_come_from_the_index(tmp_path):
    sink = _write(str(tmp_path / "s-%03d.tar"), 6)
    counts = shard_counts(sink.shards)
    assert [counts[u].samples for u in sink.shards] == [4, 2]


def test_on_s3_the_writer_and_build_index_agree_and_build_records_etags(
        s3_env, s3_bucket, s3_requests):
    base = f"s3://{s3_bucket}/idx"
    sink = _write(f"{base}/s-%03d.tar", 6)
    written = read_index(base)
    fs = pfio.from_url(base)
    log = s3_requests(fs)
    built = read_index(build_index(sink.shards, index_url=f"{base}/built.json"))
    gets = sorted(path for method, path, _ in log if method == "GET" and path.endswith(".tar"))
    assert gets == [f"/{s3_bucket}/idx/s-000.tar", f"/{s3_bucket}/idx/s-001.tar"]
    assert all(e.etag for e in built.shards)
    assert [(e.name, e.size, list(e.offsets), list(e.lengths)) for e in built.shards] == [
        (e.name, e.size, list(e.offsets), list(e.lengths)) for e in written.shards]
