"""Patches: path-only APIs (OpenCV, pandas/HDF5, h5py, soundfile, open, os, glob, numpy,
torch, PIL) take remote URIs."""

import glob
import os

import cv2
import numpy as np

import pfio

pfio.patch_all()  # once, at the start of the script (DataLoader workers inherit it)
image = np.full((4, 6, 3), 200, np.uint8)
cv2.imwrite("mem://patched/img.png", image)  # uploaded atomically when OpenCV succeeds
print(cv2.imread("mem://patched/img.png").shape)  # (4, 6, 3), via the object cache
print(cv2.imread("mem://patched/missing.png"))  # None, as for a missing local file

np.save("mem://patched/array.npy", np.arange(3))
print(np.load("mem://patched/array.npy"))  # [0 1 2]

with open("mem://patched/log.txt", "w") as f:  # builtins.open too
    f.write("ok")
print(open("mem://patched/log.txt").read())  # ok

# directory listings, as a dataset class written for local disk does them
print(sorted(os.listdir("mem://patched")))  # ['array.npy', 'img.png', 'log.txt']
print([e.path for e in os.scandir("mem://patched") if e.name.endswith(".png")])
print(glob.glob("mem://patched/*.npy"), os.path.getsize("mem://patched/log.txt"))
pfio.unpatch_all()
