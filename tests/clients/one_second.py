"""Snapshots that S3 dates in one whole second, for the tests of ``autoload``'s choice."""

import pfio


def write_in_one_second(url, names, tries=5):
    """Write the objects ``names`` under ``url`` (S3) until their modification times, whole
    seconds on S3, are equal (a write can straddle a second); returns that time."""
    fs = pfio.from_url(url)
    for _ in range(tries):
        for name in names:
            with fs.open(name, "wb") as f:
                f.write(name.encode())
        times = {fs.stat(name).last_modified for name in names}
        if len(times) == 1:
            return times.pop()
    raise AssertionError(f"no {tries} writes of {names} fell in one second")
