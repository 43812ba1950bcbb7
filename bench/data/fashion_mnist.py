#!/usr/bin/python3
"""Writes Fashion-MNIST (Debian's dataset-fashion-mnist) as an ann-benchmarks
HDF5 file, the way ann-benchmarks' datasets.py writes fashion-mnist-784-
euclidean: train = the 60,000 training images, test = the first NQ test
images, as float32 pixel values 0..255 (784-d), distance "euclidean", and
neighbors/distances = the exact top 100 (computed here in float64, ties by
id). Test images equal to a training image are skipped, so a query is never
a copy of a base vector.

    fashion_mnist.py OUT.hdf5 [NQ]
"""
import gzip
import sys

import h5py
import numpy as np

SRC = "/usr/share/datasets/fashion-mnist"
out = sys.argv[1]
nq = int(sys.argv[2]) if len(sys.argv) > 2 else 1000


def images(name):
    with gzip.open(f"{SRC}/{name}-images-idx3-ubyte.gz", "rb") as f:
        b = f.read()
    magic, n, rows, cols = np.frombuffer(b[:16], dtype=">u4")
    assert magic == 2051, magic
    return np.frombuffer(b[16:], dtype=np.uint8).reshape(n, rows * cols)


train = images("train").astype(np.float32)
seen = {r.tobytes() for r in images("train")}
test = np.array([r for r in images("t10k") if r.tobytes() not in seen][:nq], dtype=np.float32)

b = train.astype(np.float64)
bb = (b * b).sum(axis=1)
ids = np.empty((len(test), 100), dtype=np.int32)
dist = np.empty((len(test), 100), dtype=np.float32)
for lo in range(0, len(test), 100):
    q = test[lo:lo + 100].astype(np.float64)
    d2 = np.maximum(bb[None, :] - 2 * q @ b.T + (q * q).sum(axis=1)[:, None], 0)
    top = np.argpartition(d2, 150, axis=1)[:, :150]
    for i, row in enumerate(top):
        # Exact squared distances of the candidates, then a stable sort.
        exact = ((b[row] - q[i]) ** 2).sum(axis=1)
        order = np.lexsort((row, exact))[:100]
        ids[lo + i] = row[order]
        dist[lo + i] = np.sqrt(exact[order])

with h5py.File(out, "w") as f:
    f.attrs["type"] = "dense"
    f.attrs["distance"] = "euclidean"
    f.attrs["dimension"] = train.shape[1]
    f.attrs["point_type"] = "float"
    f.create_dataset("train", train.shape, dtype=train.dtype)[:] = train
    f.create_dataset("test", test.shape, dtype=test.dtype)[:] = test
    f.create_dataset("neighbors", ids.shape, dtype="i")[:] = ids
    f.create_dataset("distances", dist.shape, dtype="f")[:] = dist
print(f"{out}: train {train.shape}, test {test.shape}", file=sys.stderr)
