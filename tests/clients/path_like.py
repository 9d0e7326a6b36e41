"""A path object of the user's own, as pathlib-like libraries make: an ``os.PathLike``
whose path is a URL."""


class PathLike:
    """``os.fspath(PathLike(url))`` is ``url``."""

    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path
