"""An ImageFolder-style dataset written for local disk, as people write it: class folders
listed with ``os.scandir``, their files with ``os.walk``, images opened with PIL.

It imports no pfio: ``pfio.patch_all()`` in the training script (and pfio's startup hook in
DataLoader workers) makes it run unchanged on ``s3://``, on a zip and on ``mem://``. It lives
in a module of its own so that spawn and forkserver workers can import it by name.
"""

import os

from PIL import Image

EXTENSIONS = (".png", ".jpg", ".jpeg")


class ImageFolder:
    """Item ``i``: ``(RGB bytes, (width, height), class index, pid of the reader)``."""

    def __init__(self, root):
        self.root = root
        self.classes = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
        self.samples = []
        for index, name in enumerate(self.classes):
            for top, _, files in sorted(os.walk(os.path.join(root, name))):
                for file in sorted(files):
                    if file.lower().endswith(EXTENSIONS):
                        self.samples.append((os.path.join(top, file), index))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, target = self.samples[i]
        with Image.open(path) as image:
            rgb = image.convert("RGB")
        return rgb.tobytes(), rgb.size, target, os.getpid()
