"""Zip and tar archives as filesystems: pack many small files, read members by URL."""

import pfio

store = pfio.from_url("mem://archives")
with store.open_zip("train.zip", "w") as archive:  # write a zip on any filesystem
    for i in range(3):
        with archive.open(f"images/{i:04d}.txt", "w") as f:
            f.write(f"sample {i}")

with pfio.from_url("mem://archives/train.zip") as archive:  # a .zip path opens the archive
    print(sorted(archive.list("images")))  # ['0000.txt', '0001.txt', '0002.txt']
    print(archive.exists("images/0001.txt"))  # O(1): the name index is built once

with pfio.open_url("mem://archives/train.zip/images/0002.txt") as f:  # one member by URL
    print(f.read())  # sample 2

try:
    store.open_zip("train.zip").open("images/9999.txt")
except KeyError as error:  # also a FileNotFoundError
    print("no such member:", error)
