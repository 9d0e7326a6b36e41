"""Which images a dataset holds, and how their bytes become arrays (framework-free).

A source is one of:

* a directory URL or a container URL (``s3://b/train/``, ``s3://b/train.zip``): every image below
  it, sub-folders as classes (sorted names, labels 0..n-1), as torchvision's ``ImageFolder`` does;
* a list file URL (a text file ending in ``.txt``, ``.lst`` or ``.list``) of ``path label``
  lines (separated by spaces or tabs), as Chainer's ``LabeledImageDataset`` reads: an absolute
  path is that file (on the store of ``root``: the local filesystem, the bucket, the archive
  ``root`` is in, ...), a
  relative one is taken from ``root`` (default: the list file's directory; ``..`` may go up
  from it), as ``os.path.join(root, path)`` takes it; lines starting with ``#`` and blank
  lines are skipped;
* a sequence of URLs (labels -1) or of ``(url, label)`` pairs.

The items are kept as one compact blob (paths joined by newlines, int64 offsets and labels), so a
dataset of millions of images pickles small for DataLoader workers.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from typing import Any

from .._uri import parse_uri, split_container_path
from ..api import from_url, open_url

#: file name extensions taken as images when a directory or container is listed
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
LIST_FILE_EXTENSIONS = (".txt", ".lst", ".list")


class NameTable:
    """Many names kept as one compact blob (UTF-8, newline-separated, int64 offsets): a
    table of millions of names pickles small and costs no per-name Python object."""

    def __init__(self, names: Sequence[str]) -> None:
        import numpy as np

        encoded = [n.encode("utf-8") for n in names]
        if any(b"\n" in n for n in encoded):
            raise ValueError("names must not contain newlines")
        self._blob = b"\n".join(encoded)
        self._offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(n) + 1 for n in encoded], out=self._offsets[1:])

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, index: int) -> str:
        start, end = self._offsets[index], self._offsets[index + 1] - 1
        return self._blob[start:end].decode("utf-8")


class ImageItems:
    """Paths (relative to ``base_url``) and labels of a dataset's images."""

    def __init__(self, base_url: str, paths: Sequence[str], labels: Sequence[int],
                 classes: list[str]) -> None:
        import numpy as np

        if len(paths) != len(labels):
            raise ValueError("paths and labels differ in length")
        self.base_url = base_url
        self.classes = classes
        self._paths = NameTable(paths)
        self._labels = np.asarray(labels, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._labels)

    def path(self, index: int) -> str:
        """The path of item ``index`` relative to ``base_url``."""
        return self._paths[index]

    def label(self, index: int) -> int:
        return int(self._labels[index])


def collect(source: str | Sequence[Any], root: str | None = None,
            extensions: tuple[str, ...] = IMAGE_EXTENSIONS) -> ImageItems:
    """Resolve a dataset ``source`` (see the module docstring) into :class:`ImageItems`.

    Raises:
        FileNotFoundError: the source does not exist.
        ValueError: a list file line that is not ``path label``, or an empty source.
    """
    if not isinstance(source, str):
        items = _from_sequence(source)
    elif source.lower().endswith(LIST_FILE_EXTENSIONS):
        items = _from_list_file(source, root)
    else:
        items = _from_tree(source, extensions)
    if not len(items):
        raise ValueError(f"no images found in {source if isinstance(source, str) else 'list'}")
    return items


def _from_sequence(urls: Sequence[Any]) -> ImageItems:
    paths, labels = [], []
    for entry in urls:
        url, label = (entry, -1) if isinstance(entry, str) else entry
        paths.append(url)
        labels.append(int(label))
    return ImageItems("", paths, labels, [])


def _from_list_file(url: str, root: str | None) -> ImageItems:
    paths, labels = [], []
    with open_url(url, "r", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.rsplit(None, 1)
            if len(fields) != 2 or not fields[1].lstrip("-").isdigit():
                raise ValueError(f"{url}:{number}: expected 'path label', got {line!r}")
            paths.append(fields[0])
            labels.append(int(fields[1]))
    base = root if root is not None else posixpath.dirname(url)
    top, names = _from_top(base or ".", paths, url)
    return ImageItems(top, names, labels, [])


def _from_top(base: str, paths: Sequence[str], where: str) -> tuple[str, list[str]]:
    """The URL of the top of ``base``'s store and each of ``paths`` as a name below it: an
    absolute path (or a URL on the same store) as it is, a relative one joined to ``base``,
    as ``os.path.join(base, path)`` takes it. The store is the local filesystem (``/``; a
    relative local ``base`` is taken from the working directory now), the bucket
    (``s3://bucket/``), ..., or the archive ``base`` is in (a leading ``/`` is its top, as
    in every archive).

    Raises:
        ValueError: a path is a URL of another store than ``base``'s (or any URL, when
            ``base`` is in an archive).
    """
    store = parse_uri(base)
    outer, containers, inner = split_container_path(store.path)
    if containers:
        top = posixpath.join(outer, *(name for name, _ in containers))
        start = "/" + inner
    else:
        top, start = "/", store.path
    if store.scheme == "file":
        top = os.path.abspath(top)
        start = start if containers else os.path.abspath(start)
    else:
        top = f"{store.scheme}://{store.netloc}/{top.lstrip('/')}"
        start = "/" + start.lstrip("/")
    names = []
    for path in paths:
        entry = parse_uri(path)
        if entry.scheme == "file" and not path.startswith("file:"):  # a plain path
            entry = store.with_path(entry.path)
        elif containers or (entry.scheme, entry.netloc) != (store.scheme, store.netloc):
            raise ValueError(f"{where}: {path!r} is not on the store of {base!r}; the paths "
                             "of a list file are on one store (absolute, or relative to root)")
        names.append(posixpath.normpath(posixpath.join(start, entry.path)).lstrip("/"))
    return top, names


def _from_tree(url: str, extensions: tuple[str, ...]) -> ImageItems:
    with from_url(url) as fs:
        files = [st.filename for st in fs.list(recursive=True, detail=True) if not st.isdir()]
    names = sorted(name for name in files if name.lower().endswith(extensions))
    if not names:
        raise ValueError(_no_images(url, files, extensions))
    classes = sorted({name.split("/", 1)[0] for name in names if "/" in name})
    index = {name: i for i, name in enumerate(classes)}
    labels = [index[n.split("/", 1)[0]] if "/" in n else -1 for n in names]
    return ImageItems(url, names, labels, classes)


def _no_images(url: str, files: list[str], extensions: tuple[str, ...]) -> str:
    """Why ``url`` gives no images, and what to use instead when it holds other files."""
    if not files:
        return f"no images found in {url}: it holds no files"
    return (f"no images found in {url}: none of its {len(files)} files ends with "
            f"{', '.join(extensions)} (e.g. {min(files)!r}); for objects of any kind use "
            "pfio.integrations.torch.PfioObjectDataset.from_prefix(url, "
            "transform=...), whose transform reads each object")


def decode_image(data: bytes, decoder: str = "cv2") -> Any:
    """Decode image bytes: ``"cv2"`` gives an HWC uint8 RGB array, ``"pil"`` an RGB PIL image.

    Raises:
        ValueError: the bytes are not an image the decoder can read, or an unknown decoder.
    """
    if decoder == "cv2":
        import cv2
        import numpy as np

        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError("cv2 could not decode the image bytes")
        return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    if decoder == "pil":
        import io

        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(data)) as picture:
                return picture.convert("RGB")
        except UnidentifiedImageError as exc:
            raise ValueError(f"PIL could not decode the image bytes: {exc}") from None
    raise ValueError(f"unknown decoder {decoder!r}: use 'cv2' or 'pil'")
