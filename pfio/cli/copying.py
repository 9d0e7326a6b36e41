"""The command lines of the commands that copy: ``cp``, ``sync`` and ``pack`` (the copying
itself is :mod:`pfio.cli.transfer`'s)."""

from __future__ import annotations

import argparse
from typing import Any

from ..fs.transfer import COMPARES
from . import transfer
from .common import add_command, locate, positive_int, refuse_existing


def add_parsers(commands: Any) -> None:
    """Add ``cp``, ``sync`` and ``pack`` to the ``pfio`` command's ``commands``."""
    cp = add_command(
        commands, "cp", "copy files between any filesystems",
        "Copy SRC to DST; either may be on any filesystem. When DST is an existing "
        "directory, SRC is copied into it; a SRC ending with '/' copies what is in the "
        "directory, as rsync does. Files are copied by a pool of threads (server-side "
        "between buckets of one S3 endpoint) and appear at DST only when they are complete. "
        "A file at DST is replaced, as cp replaces it, unless -n ('pfio sync' copies only "
        "what changed).",
        "  pfio cp s3://bucket/model.pt ./model.pt\n"
        "  pfio cp -r data/ s3://bucket/data/",
        lambda args: transfer.cp(args.src, args.dst, recursive=args.recursive,
                                 quiet=args.quiet, no_clobber=args.no_clobber,
                                 workers=args.workers))
    cp.add_argument("src", metavar="SRC", help="the file (or directory, with -r)")
    cp.add_argument("dst", metavar="DST", help="the destination file or directory")
    cp.add_argument("-r", "--recursive", action="store_true",
                    help="copy directories and everything in them")
    cp.add_argument("-n", "--no-clobber", action="store_true",
                    help="fail, copying nothing, when a destination file exists")
    sync = add_command(
        commands, "sync", "make a directory a copy of another",
        "Copy to DST every file under SRC that DST lacks or holds in another version "
        "(--compare), so that DST/a/b holds SRC/a/b; either may be on any filesystem, and "
        "DST is made when missing. Running it again copies nothing. With --delete, files "
        "under DST that SRC does not have are removed; --dry-run prints what would be "
        "copied and deleted ('copy NAME', 'delete NAME') and changes nothing.",
        "  pfio sync data/ s3://bucket/data/\n"
        "  pfio sync --delete --dry-run s3://bucket/run1/ checkpoints/run1/",
        _sync)
    sync.add_argument("src", metavar="SRC", help="the directory to copy from")
    sync.add_argument("dst", metavar="DST", help="the directory to bring up to date")
    sync.add_argument("--delete", action="store_true",
                      help="remove the files under DST that SRC does not have")
    sync.add_argument("-n", "--dry-run", action="store_true",
                      help="print what would be copied and removed; change nothing")
    sync.add_argument("--compare", choices=COMPARES, default="size_mtime",
                      help="what makes a file at DST out of date: size_mtime (the default: "
                           "another size, or older than SRC's), size, etag (S3's ETag, "
                           "else the MD5 of the bytes) or checksum (MD5 of the bytes)")
    pack = add_command(
        commands, "pack", "pack a directory into one .zip or .tar archive",
        "Write every file and directory under SRC into a new archive DST (its name ends in "
        ".zip or .tar), in sorted order, streaming: neither the archive nor a file is held "
        "in memory. One archive of many small files reads much faster than the files do, "
        "above all on object stores. An existing DST is replaced only with --force. A "
        "progress bar is shown when standard error is a terminal.",
        "  pfio pack images/ images.zip\n"
        "  pfio pack --compression stored s3://bucket/jpegs/ s3://bucket/jpegs.zip",
        _pack)
    pack.add_argument("src", metavar="SRC", help="the directory to pack")
    pack.add_argument("dst", metavar="DST", help="the archive to write: *.zip or *.tar")
    pack.add_argument("--compression", choices=["deflated", "stored", "bzip2", "lzma"],
                      help="zip member compression (default: deflated); 'stored' suits "
                           "files that are compressed already (JPEG, PNG)")
    pack.add_argument("-f", "--force", action="store_true",
                      help="replace an existing archive at DST")
    for parser in (cp, sync):
        parser.add_argument("-w", "--workers", type=positive_int, metavar="N",
                            help="files copied at once (default: 8 between local or mem:// "
                                 "files, else 32)")
    for parser in (cp, sync, pack):
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar" + (" and no summary" if parser is sync
                                                      else ""))


def _sync(args: argparse.Namespace) -> int:
    from .transfer import sync_command

    return sync_command(args.src, args.dst, delete=args.delete, dry_run=args.dry_run,
                        workers=args.workers, quiet=args.quiet, compare=args.compare)


def _pack(args: argparse.Namespace) -> int:
    transfer.archive_kind(args.dst, args.compression)  # a wrong name is a usage error first
    fs, name = locate(args.dst)
    with fs:
        refuse_existing(fs, name, args.dst, args.force)
    return transfer.pack(args.src, args.dst, quiet=args.quiet, compression=args.compression)
