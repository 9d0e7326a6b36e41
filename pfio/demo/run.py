"""``python -m pfio demo``: train on S3 through pfio, end to end (see :mod:`pfio.demo`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .options import EpochStats, Options, default_workers

logger = logging.getLogger(__name__)

BUCKET = "pfio-demo"

if TYPE_CHECKING:
    from ..cli.common import Subparsers


#: what a run writes into its output folder (removed first: every run starts clean)
OUTPUTS = ("trace-parts", "cache", "trace.json", "data-wait.png", "summary.json",
           "throughput.png")

DESCRIPTION = ("Train a small CNN on images in a zip on S3, through pfio: an embedded S3 "
               "server, pfio pack, a cached DataLoader with pfio.patch_all(), checkpoints "
               "on S3, a simulated crash and a resume, and the tracer's view of each epoch "
               "(trace.json, data-wait.png). Progress goes to standard error, the summary to "
               "standard output.")


def add_demo_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Add ``pfio demo`` to the ``pfio`` command's sub-commands."""
    parser = subparsers.add_parser("demo", help="train end to end on an embedded S3 server",
                                   description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(handler=lambda args: run(_options(args)))
    return parser


def parse_args(argv: list[str] | None = None) -> Options:
    """Options from a command line (``python -m pfio.demo.run``)."""
    parser = argparse.ArgumentParser(prog="pfio demo", description=DESCRIPTION)
    add_arguments(parser)
    return _options(parser.parse_args(argv))


def _options(args: argparse.Namespace) -> Options:
    return Options(**{k: v for k, v in vars(args).items() if k in Options.__dataclass_fields__})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options."""
    parser.add_argument("--url", help="s3://bucket/prefix of a real bucket (default: an "
                        "embedded moto S3 server on 127.0.0.1)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=default_workers(),
                        help="DataLoader workers (default: 4, at most one per CPU core)")
    parser.add_argument("--images", type=int, default=3000, help="images to generate")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--checkpoint-every", type=int, default=20, metavar="STEPS",
                        help="save a checkpoint every STEPS steps (and at each epoch end)")
    parser.add_argument("--out", default="demo-output", help="local folder for trace.json, "
                        "data-wait.png and summary.json (what an earlier run left there is "
                        "replaced)")
    parser.add_argument("--progress-every", type=float, default=5.0, metavar="SECONDS",
                        help="seconds between progress lines within an epoch (0: every batch)")
    parser.add_argument("--no-interrupt", dest="interrupt", action="store_false",
                        help="do not simulate a crash")


@contextlib.contextmanager
def storage(options: Options) -> Iterator[str]:
    """The S3 prefix to work under: the given one, or a bucket on an embedded server."""
    if options.url:
        yield options.url.rstrip("/")
        return
    from ..testing.s3server import MotoServer

    with MotoServer() as server:
        saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                                 "AWS_DEFAULT_REGION", "S3_ENDPOINT")}
        os.environ.update(AWS_ACCESS_KEY_ID="demo", AWS_SECRET_ACCESS_KEY="demo",
                          AWS_DEFAULT_REGION="us-east-1", S3_ENDPOINT=server.endpoint)
        try:
            import pfio

            pfio.from_url(f"s3://{BUCKET}", create_bucket=True).close()
            logger.info("embedded S3 server (moto) at %s, bucket %s", server.endpoint,
                        BUCKET)
            yield f"s3://{BUCKET}/demo"
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def prepare_dataset(base: str, options: Options) -> str:
    """Draw the images, pack them into a zip on S3 with ``pfio pack``; return its URL."""
    from .data import write_dataset

    url = f"{base}/train.zip"
    with tempfile.TemporaryDirectory(prefix="pfio-demo-") as tmp:
        started = time.perf_counter()
        write_dataset(tmp, options.images, seed=options.seed)
        logger.info("drew %d images in %.1f s", options.images,
                    time.perf_counter() - started)
        quiet = [] if sys.stderr.isatty() else ["--quiet"]
        # the command line a user would type (a separate process: the demo sits above the CLI)
        if subprocess.run([sys.executable, "-m", "pfio", "pack", *quiet, tmp, url]).returncode:
            raise RuntimeError(f"pfio pack failed for {url}")
    logger.info("packed into %s", url)
    return url


def main(argv: list[str] | None = None) -> int:
    """Run the demo with a command line; return the exit status."""
    logging.basicConfig(level=logging.WARNING)
    return run(parse_args(argv))


def run(options: Options) -> int:
    """Run the demo; return the exit status."""
    fresh_output(options.out)
    with progress_on_stderr(), storage(options) as base:
        logger.info("%d DataLoader workers, %d epochs, %d images", options.workers,
                    options.epochs, options.images)
        dataset_url = prepare_dataset(base, options)
        from .train import train

        stats = train(base, dataset_url, options)
    report(stats, options)
    return 0


def fresh_output(out: str) -> None:
    """Make ``out``, removing what an earlier run wrote there (and nothing else)."""
    os.makedirs(out, exist_ok=True)
    for name in OUTPUTS:
        path = os.path.join(out, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)


@contextlib.contextmanager
def progress_on_stderr() -> Iterator[None]:
    """Show the demo's progress lines (its ``pfio.demo`` log records of level INFO and up)
    on standard error while the block runs."""
    demo = logging.getLogger("pfio.demo")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    saved = demo.level, demo.propagate
    demo.addHandler(handler)
    demo.setLevel(logging.INFO)
    demo.propagate = False
    try:
        yield
    finally:
        demo.removeHandler(handler)
        demo.level, demo.propagate = saved


def report(stats: list[EpochStats], options: Options) -> None:
    """Print the per-epoch figures and trace summaries; write summary.json and the plot."""
    from .plot import plot_data_wait

    for s in stats:
        print(f"=== epoch {s.epoch}: what pfio did (all processes) ===\n{s.summary}\n")
    print("epoch  images  images/s  waiting for data  pfio IO, all threads  S3 requests  "
          "cache hits")
    for s in stats:
        mark = "*" if s.resumed_after is not None else " "
        print(f"{s.epoch:>5}  {s.images:>6,}{mark} {s.images_per_second:>8,.0f}  "
              f"{s.data_wait_seconds:>14.1f} s  {s.io_seconds:>18.1f} s  {s.s3_requests:>11}  "
              f"{s.cache_hit_ratio:>10.0%}")
    for s in stats:
        if s.resumed_after is not None:
            print(f"* resumed after the simulated crash: the checkpoint had trained on "
                  f"{s.resumed_after:,} images of epoch {s.epoch}, this run on the other "
                  f"{s.images:,}")
    print("Epoch 1 reads the zip from S3 while the cache fills; later epochs read the local "
          "cache and send S3 only the checkpoints. The cache shows in the time the training "
          "loop waits for data; images/s is bounded by the model's computation here.")
    plot_data_wait(stats, os.path.join(options.out, "data-wait.png"))
    with open(os.path.join(options.out, "summary.json"), "w") as f:
        json.dump([{k: v for k, v in vars(s).items() if k != "summary"} for s in stats], f,
                  indent=1)
    print(f"wrote {options.out}/trace.json (open it in https://ui.perfetto.dev), "
          f"{options.out}/data-wait.png and {options.out}/summary.json")


if __name__ == "__main__":
    raise SystemExit(main())
