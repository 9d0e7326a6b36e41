"""A torch Dataset whose items are ``cv2.imread`` of URLs, for the DataLoader worker tests
(test_dataloader_workers.py).

It lives in a module of its own so that spawn and forkserver workers can import it by name,
and it imports only cv2 (a DataLoader takes any object with ``__len__`` and
``__getitem__``): what makes ``cv2.imread`` take URLs in a worker must be the patches that
the worker inherits from the parent process.
"""

import os

import cv2


class ImreadDataset:
    """Item ``i``: ``(i, cv2.imread(urls[i]), the pid of the process that read it)``."""

    def __init__(self, urls):
        self.urls = list(urls)

    def __len__(self):
        return len(self.urls)

    def __getitem__(self, index):
        image = cv2.imread(self.urls[index])
        if image is None:
            raise FileNotFoundError(f"cv2.imread({self.urls[index]!r}) returned None")
        return index, image, os.getpid()
