"""Training input at the local-disk limit (issue 24), on a Ceph RADOS Gateway on loopback.

3,000 JPEGs of about 110 KiB in 10 classes (600 with ``--quick``), stored five ways: a local
directory (the limit), single objects under an S3 prefix, one zip, 12 tar shards in the
webdataset layout (``key.jpg`` + ``key.cls``), and litdata's chunk format. Each row is one
epoch of a DataLoader (batch 64, 2 workers) in a process of its own; per image: read, PIL
decode, resize to 224, CHW uint8 (``training_epoch.py``, shared with the baselines, which run
in their own virtualenvs: s3torchconnector 1.5, webdataset 1.0.2 over presigned URLs and
curl as its users read S3, litdata 0.2.76). Rounds are interleaved; the best of each row is
kept. CPU is the client's: the loader process and its workers.

GETs and bytes moved are counted in a separate pass through a counting proxy
(``pfio.testing.faultproxy``) in front of the gateway, so the timed rounds pay nothing for it.

Targets (ratios to a baseline of the same run):
- epoch 1 with decode: ``PfioWebDataset`` >= 0.95x the local directory, >= 1.0x webdataset and
  litdata; ``PfioObjectDataset`` and ``PfioImageDataset`` (zip) >= 1.1x s3torchconnector's
  ``S3MapDataset``, client CPU per image <= 1.02x local; with 2 workers >= 0.95x of 4 workers;
- IO alone: ``PfioWebDataset`` >= 1.0x webdataset's samples/s at <= its CPU per sample;
- ``patch_all(cache=True)`` on epoch 1 >= 0.9x the same code without cache, one GET per file;
  epoch 2 from the cache at the local directory's CPU per image.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Row, ceph_endpoint, main, run_in_baseline, run_script  # noqa: E402

HERE = Path(__file__).resolve().parent
BUCKET = "bench-training-input"
SHARDS = 12
CLASSES = 10
SIDE = 360  # a 360 x 360 JPEG of this texture at quality 90 is about 110 KiB


def _jpeg(rng: Any) -> bytes:
    import numpy as np
    from PIL import Image

    noise = rng.integers(0, 256, (SIDE, SIDE, 3), dtype=np.uint8)
    smooth = np.repeat(np.repeat(noise[::2, ::2], 2, axis=0), 2, axis=1)
    out = io.BytesIO()
    Image.fromarray((noise // 4 + smooth // 4 * 3).astype(np.uint8)).save(out, "JPEG",
                                                                           quality=90)
    return out.getvalue()


def make_images(count: int) -> list[tuple[str, bytes]]:
    """``class_K/NNNNN.jpg`` names and JPEG bytes, deterministic."""
    import numpy as np

    rng = np.random.default_rng(0)
    return [(f"class_{i % CLASSES}/{i:05d}.jpg", _jpeg(rng)) for i in range(count)]


def _tar_shard(samples: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in samples:
            key = name[:-len(".jpg")]
            label = str(int(name.split("/")[0].rsplit("_", 1)[1])).encode()
            for ext, payload in (("jpg", data), ("cls", label)):
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size, info.mtime, info.mode = len(payload), 0, 0o644
                tar.addfile(info, io.BytesIO(payload))
    return out.getvalue()


def _zip(images: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in images:
            archive.writestr(name, data)
    return out.getvalue()


class Stores:
    """Where the images are: local directory and URLs on the gateway."""

    def __init__(self, local: str, count: int) -> None:
        self.local = local
        self.count = count
        base = f"s3://{BUCKET}/n{count}"
        self.prefix = f"{base}/prefix"
        self.zip = f"{base}/train.zip"
        self.shards = [f"{base}/shards/train-{i:04d}.tar" for i in range(SHARDS)]
        self.shard_pattern = f"{base}/shards/train-{{0000..{SHARDS - 1:04d}}}.tar"
        self.litdata = f"{base}/litdata"


def store_data(root: str, count: int) -> Stores:
    """Write the images locally and, unless already there, to the gateway (the ``AWS_*``
    variables and ``S3_ENDPOINT`` of this process name it)."""
    import pfio

    images = make_images(count)
    stores = Stores(os.path.join(root, "local"), count)
    for name, data in images:
        path = os.path.join(stores.local, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Path(path).write_bytes(data)
    fs = pfio.from_url(f"s3://{BUCKET}/")
    if fs.exists(stores.shards[-1][len(f"s3://{BUCKET}/"):]):
        return stores
    uploads: list[tuple[str, bytes]] = [(f"{stores.prefix}/{n}", d) for n, d in images]
    uploads.append((stores.zip, _zip(images)))
    per_shard = -(-count // SHARDS)
    uploads += [(url, _tar_shard(images[i * per_shard:(i + 1) * per_shard]))
                for i, url in enumerate(stores.shards)]
    _upload(uploads)
    _litdata_upload(root, stores)
    return stores


def _upload(items: list[tuple[str, bytes]]) -> None:
    import pfio

    def put(item: tuple[str, bytes]) -> None:
        with pfio.open_url(item[0], "wb") as f:
            f.write(item[1])

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, items))


def _litdata_upload(root: str, stores: Stores) -> None:
    """litdata's own ``optimize`` writes its chunks locally (in its virtualenv); they are
    uploaded as they are."""
    out = os.path.join(root, "litdata")
    run_in_baseline("litdata", f"""
        import os, sys
        sys.path.insert(0, {str(HERE)!r})
        from litdata import optimize
        from training_epoch import label_of, report

        def sample(path):
            with open(path, "rb") as f:
                return {{"jpg": f.read(), "cls": label_of(path)}}

        if __name__ == "__main__":  # litdata's workers are spawned: they import this file
            paths = sorted(os.path.join(d, n) for d, _, ns in os.walk({stores.local!r})
                           for n in ns)
            optimize(fn=sample, inputs=paths, output_dir={out!r}, chunk_bytes="64MB",
                     num_workers=1, mode="overwrite")
            report({{}})
    """, timeout=1200)
    _upload([(f"{stores.litdata}/{p.relative_to(out)}", p.read_bytes())
             for p in Path(out).rglob("*") if p.is_file()])


# -- the rows --------------------------------------------------------------------------------

_HEAD = f"""
import os, sys
sys.path.insert(0, {str(HERE)!r})
from training_epoch import FolderDataset, decode, label_of, report, run_epoch, to_chw
"""

#: pfio's rows: name -> code that sets ``dataset`` (``IO`` is True for the IO-only pass)
PFIO_ROWS: dict[str, str] = {
    "local directory": "dataset = FolderDataset(LOCAL, io_only=IO)",
    "pfio PfioImageDataset, zip": """
from pfio.integrations.torch import PfioImageDataset
dataset = PfioImageDataset(ZIP, decoder="pil", transform=(lambda im: 0) if IO else to_chw)
""",
    "pfio patch_all(), S3 prefix": """
import pfio
pfio.patch_all()
dataset = FolderDataset(PREFIX, io_only=IO)
""",
    "pfio PfioObjectDataset.from_prefix": """
from pfio.integrations.torch import PfioObjectDataset
def sample(obj):
    data = obj.read()
    return (len(data) if IO else decode(data)), label_of(obj.key)
dataset = PfioObjectDataset.from_prefix(PREFIX, transform=sample)
""",
    "pfio PfioShardDataset, 12 tar shards": """
from pfio.integrations.torch import PfioShardDataset
dataset = PfioShardDataset(SHARDS, decoder="pil", transform=(lambda im: 0) if IO else to_chw)
""",
    "pfio PfioWebDataset, 12 tar shards": """
from pfio.integrations.torch import PfioWebDataset
def sample(s):
    return (len(s["jpg"]) if IO else decode(s["jpg"])), int(s["cls"])
dataset = PfioWebDataset(PATTERN, transform=sample)
""",
}

BASELINE_ROWS: dict[str, tuple[str, str]] = {
    "s3torchconnector S3MapDataset.from_prefix": ("s3torchconnector", """
from s3torchconnector import S3ClientConfig, S3MapDataset
def sample(reader):
    data = reader.read()
    return (len(data) if IO else decode(data)), label_of(reader.key)
dataset = S3MapDataset.from_prefix(PREFIX + "/", region="us-east-1", endpoint=ENDPOINT,
                                   transform=sample,
                                   s3client_config=S3ClientConfig(force_path_style=True))
"""),
    "webdataset, 12 tar shards": ("webdataset", """
import boto3, webdataset as wds
s3 = boto3.client("s3", endpoint_url=ENDPOINT)
urls = [s3.generate_presigned_url("get_object", ExpiresIn=3600,
        Params={"Bucket": u.split("/")[2], "Key": u.split("/", 3)[3]}) for u in SHARDS]
def sample(s):
    return (len(s["jpg"]) if IO else decode(s["jpg"])), int(s["cls"])
dataset = wds.WebDataset(urls, shardshuffle=False, empty_check=False).map(sample)
"""),
    "litdata StreamingDataset": ("litdata", """
import tempfile
import litdata.streaming.downloader as downloader
from litdata import StreamingDataset
# litdata downloads chunks with obstore, which refuses plain http unless told: the gateway on
# loopback speaks http, where AWS speaks https
downloader._OBSTORE_CLIENT_OPTIONS["allow_http"] = True
class Decoded(StreamingDataset):
    def __getitem__(self, index):
        s = super().__getitem__(index)
        return (len(s["jpg"]) if IO else decode(s["jpg"])), s["cls"]
dataset = Decoded(LITDATA, cache_dir=tempfile.mkdtemp(), storage_options={
    "endpoint_url": ENDPOINT, "aws_access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
    "aws_secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"]})
"""),
}


def _script(dataset_code: str, stores: Stores, endpoint: str, io_only: bool, workers: int,
            epochs: int = 1) -> str:
    settings = (f"LOCAL = {stores.local!r}\nZIP = {stores.zip!r}\nPREFIX = {stores.prefix!r}\n"
                f"SHARDS = {stores.shards!r}\nPATTERN = {stores.shard_pattern!r}\n"
                f"LITDATA = {stores.litdata!r}\nENDPOINT = {endpoint!r}\nIO = {io_only!r}\n")
    epochs_code = (f"report({{'epochs': [run_epoch(dataset, workers={workers}) "
                   f"for _ in range({epochs})]}})")
    return _HEAD + settings + dataset_code + "\n" + epochs_code + "\n"


def _environment(endpoint: str, credentials: dict[str, str], cache_dir: str) -> dict[str, str]:
    return {**credentials, "S3_ENDPOINT": endpoint, "AWS_ENDPOINT_URL": endpoint,
            "XDG_CACHE_HOME": cache_dir, "PFIO_CACHE_DIR": cache_dir}


def measure_row(name: str, stores: Stores, endpoint: str, credentials: dict[str, str],
                io_only: bool = False, workers: int = 2, epochs: int = 1,
                code: str | None = None) -> list[dict[str, float]]:
    """The epochs of one row, each in a fresh process with an empty cache directory."""
    cache_dir = tempfile.mkdtemp(prefix="pfio-bench-cache-")
    try:
        env = _environment(endpoint, credentials, cache_dir)
        if name in BASELINE_ROWS:
            venv, dataset_code = BASELINE_ROWS[name]
            script = _script(dataset_code, stores, endpoint, io_only, workers, epochs)
            return run_in_baseline(venv, script, env, timeout=1800)["epochs"]
        script = _script(code or PFIO_ROWS[name], stores, endpoint, io_only, workers, epochs)
        return run_script(Path(sys.executable), script, env, timeout=1800)["epochs"]
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


CACHED = """
import pfio
pfio.patch_all(cache=True)
dataset = FolderDataset(PREFIX, io_only=IO)
"""


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    return max(runs, key=lambda r: r["rate"])


def measure(stores: Stores, endpoint: str, credentials: dict[str, str],
            rounds: int) -> dict[str, dict[str, float]]:
    """Best-of-``rounds`` results of every row, rounds interleaved."""
    found: dict[str, list[dict[str, float]]] = {}
    names = [*PFIO_ROWS, *BASELINE_ROWS]
    for _ in range(rounds):
        for name in names:
            found.setdefault(name, []).extend(measure_row(name, stores, endpoint, credentials))
            found.setdefault(f"{name} [IO]", []).extend(
                measure_row(name, stores, endpoint, credentials, io_only=True))
        for name in ("pfio PfioObjectDataset.from_prefix", "pfio PfioImageDataset, zip"):
            found.setdefault(f"{name} [4 workers]", []).extend(
                measure_row(name, stores, endpoint, credentials, workers=4))
        epoch1, epoch2 = measure_row("cache", stores, endpoint, credentials, epochs=2,
                                     code=CACHED)
        found.setdefault("pfio patch_all(cache=True) epoch 1", []).append(epoch1)
        found.setdefault("pfio patch_all(cache=True) epoch 2", []).append(epoch2)
    return {name: _best(runs) for name, runs in found.items()}


def count_requests(stores: Stores, endpoint: str,
                   credentials: dict[str, str]) -> dict[str, tuple[int, int, float]]:
    """GETs, other requests and MiB received of one IO-only epoch of each S3 row, through a
    counting proxy."""
    from urllib.parse import urlsplit

    from pfio.testing.faultproxy import FaultProxy

    host = urlsplit(endpoint)
    counts = {}
    with FaultProxy(host.hostname, host.port) as proxy:
        rows = [n for n in [*PFIO_ROWS, *BASELINE_ROWS] if n != "local directory"]
        for name in [*rows, "cache"]:
            proxy.reset()
            measure_row(name, stores, proxy.endpoint, credentials, io_only=True,
                        code=CACHED if name == "cache" else None)
            gets = proxy.methods["GET"]
            counts[name] = (gets, proxy.requests - gets, proxy.bytes_down / 2**20)
    return counts


# -- the table -------------------------------------------------------------------------------

def rows(results: dict[str, dict[str, float]],
         counts: dict[str, tuple[int, int, float]]) -> list[Row]:
    """The issue's table as rows, and the targets."""
    local = results["local directory"]
    found = []
    for name, result in results.items():
        if name.endswith("[IO]") or name.endswith("[4 workers]"):
            continue
        requests = counts.get("cache" if "cache=True" in name else name)
        extra = "" if requests is None or "epoch 2" in name else (
            f" ({requests[0]:,} GETs + {requests[1]:,} other, {requests[2]:,.0f} MiB)")
        found.append(Row("training input, epoch 1", f"{name}: images/s{extra}",
                         result["rate"], "local directory", local["rate"], None, unit="img/s"))
        found.append(Row("training input, epoch 1", f"{name}: client CPU per image",
                         result["cpu_ms"], "local directory", local["cpu_ms"], None, False,
                         unit="ms"))
    found += _targets(results)
    return found


def _targets(results: dict[str, dict[str, float]]) -> list[Row]:
    def rate(a: str, b: str, target: float, label: str = "images/s") -> Row:
        return Row("training input targets", f"{a}: {label}", results[a]["rate"], b,
                   results[b]["rate"], target, unit="img/s")

    def cpu(a: str, b: str, target: float) -> Row:
        return Row("training input targets", f"{a}: CPU per image", results[a]["cpu_ms"], b,
                   results[b]["cpu_ms"], target, False, unit="ms")

    web, objects, zipped = ("pfio PfioWebDataset, 12 tar shards",
                            "pfio PfioObjectDataset.from_prefix", "pfio PfioImageDataset, zip")
    s3map = "s3torchconnector S3MapDataset.from_prefix"
    return [
        rate(web, "local directory", 0.95),
        rate(web, "webdataset, 12 tar shards", 1.0),
        rate(web, "litdata StreamingDataset", 1.0),
        rate(objects, s3map, 1.1),
        rate(zipped, s3map, 1.1),
        cpu(objects, "local directory", 1.02),
        cpu(zipped, "local directory", 1.02),
        rate(objects, f"{objects} [4 workers]", 0.95, "2 workers vs 4"),
        rate(zipped, f"{zipped} [4 workers]", 0.95, "2 workers vs 4"),
        rate(f"{web} [IO]", "webdataset, 12 tar shards [IO]", 1.0, "IO alone, samples/s"),
        cpu(f"{web} [IO]", "webdataset, 12 tar shards [IO]", 1.0),
        rate("pfio patch_all(cache=True) epoch 1", "pfio patch_all(), S3 prefix", 0.9),
        cpu("pfio patch_all(cache=True) epoch 2", "local directory", 1.05),
    ]


def run(quick: bool) -> list[Row]:
    """All rows on the Ceph RADOS Gateway (none without one: moto's ~3 ms of CPU per request
    would measure moto)."""
    ceph = ceph_endpoint()
    if ceph is None:
        print("bench_training_input needs a Ceph RADOS Gateway (scripts/ceph-rgw.sh start; "
              "PFIO_CEPH_ENV): no rows", file=sys.stderr)
        return []
    endpoint, credentials = ceph
    os.environ.update({**credentials, "S3_ENDPOINT": endpoint})
    _bucket(BUCKET)
    with tempfile.TemporaryDirectory(prefix="pfio-bench-train-") as root:
        stores = store_data(root, 600 if quick else 3000)
        counts = count_requests(stores, endpoint, credentials)
        results = measure(stores, endpoint, credentials, 1 if quick else 3)
    return rows(results, counts)


def _bucket(name: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"])
    try:
        client.create_bucket(Bucket=name)
    except client.exceptions.BucketAlreadyOwnedByYou:
        pass


if __name__ == "__main__":
    main(run)
