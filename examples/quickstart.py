"""Quick start: one API for every filesystem (here mem://; s3://, hdfs://, paths alike)."""

import pfio

with pfio.from_url("mem://scratch/run1") as fs:
    with fs.open("notes.txt", "w") as f:  # written atomically: visible on close
        f.write("hello\n")
    fs.makedirs("logs/epoch1", exist_ok=True)
    print(sorted(fs.list()))  # ['logs/', 'notes.txt']
    print(fs.stat("notes.txt").size)  # 6

with pfio.open_url("mem://scratch/run1/notes.txt") as f:  # text mode by default, like open()
    print(f.read(), end="")

try:
    pfio.open_url("mem://scratch/run1/missing.txt")
except FileNotFoundError as error:  # builtin errors on every backend
    print("missing:", error.filename)
