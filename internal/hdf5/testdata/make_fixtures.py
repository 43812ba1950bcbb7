#!/usr/bin/python3
"""Writes the HDF5 fixtures of internal/hdf5 and recall: small data sets in the
layout of ann-benchmarks (train, test, neighbors, distances and the root
attributes type, distance, dimension, point_type), written with h5py the way
ann-benchmarks' datasets.py writes them (write_output), and in the other
layouts h5py writes (chunked, gzip, shuffle, libver="latest").

Every value comes from value(i, j, salt), a splitmix64 hash that the Go tests
compute too, so they check every element; neighbors and distances are the
exact float64 top COUNT under the file's metric.

    /usr/bin/python3 make_fixtures.py   # in this directory; needs python3-h5py
"""
import h5py
import numpy as np

MASK = (1 << 64) - 1


def value(i, j, salt):
    """The fixture value at row i, column j: a float in [-0.5, 0.5)."""
    x = ((i * 1000003 + j * 7919 + salt * 104729 + 1) * 0x9E3779B97F4A7C15) & MASK
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK
    x ^= x >> 31
    return (x >> 40) / float(1 << 24) - 0.5


def matrix(n, d, salt):
    return np.array([[value(i, j, salt) for j in range(d)] for i in range(n)], dtype=np.float32)


def truth(train, test, metric, count):
    """Exact top count ids and distances, in float64, ties broken by id."""
    b = train.astype(np.float64)
    q = test.astype(np.float64)
    if metric == "angular":
        bn = b / np.linalg.norm(b, axis=1, keepdims=True)
        qn = q / np.linalg.norm(q, axis=1, keepdims=True)
        dist = 1 - qn @ bn.T
    elif metric == "euclidean":
        dist = np.sqrt(((q[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))
    else:  # dot: larger is nearer; ann-benchmarks stores the negated product
        dist = -(q @ b.T)
    ids = np.argsort(dist, axis=1, kind="stable")[:, :count]
    return ids.astype(np.int32), np.take_along_axis(dist, ids, axis=1).astype(np.float32)


def write(fn, n, nq, d, metric, count, libver="earliest", distance_attr=None, **layouts):
    train, test = matrix(n, d, 1), matrix(nq, d, 2)
    ids, dist = truth(train, test, metric, count)
    with h5py.File(fn, "w", libver=libver) as f:
        # As ann-benchmarks' write_output.
        f.attrs["type"] = "dense"
        f.attrs["distance"] = metric if distance_attr is None else distance_attr
        f.attrs["dimension"] = d
        f.attrs["point_type"] = "float"
        for name, data in (("train", train), ("test", test), ("neighbors", ids), ("distances", dist)):
            kw = layouts.get(name, {})
            f.create_dataset(name, data.shape, dtype=data.dtype, **kw)[:] = data


# Exactly ann-benchmarks' layout: contiguous datasets, superblock 0, object
# header 1, variable-length string attributes in the global heap.
write("ann-contiguous.hdf5", 300, 20, 24, "angular", 100)

# Chunked and gzip-deflated (with shuffle for train), edge chunks in both
# dimensions, more chunks than one B-tree node holds (so the chunk B-tree has
# two levels), and a fixed-length string attribute.
write("ann-chunked-gzip.hdf5", 301, 20, 24, "euclidean", 100,
      distance_attr=np.bytes_("euclidean"),
      train=dict(chunks=(4, 10), compression="gzip", compression_opts=4, shuffle=True),
      test=dict(chunks=(7, 24), compression="gzip"),
      neighbors=dict(chunks=(5, 100), compression="gzip"),
      distances=dict(chunks=(20, 50)))

# libver="latest": superblock 3, object header 2, link messages, attribute
# message 3, layout message 4 with the fixed-array and single-chunk indexes.
write("ann-latest.hdf5", 260, 17, 16, "dot", 50, libver="latest",
      test=dict(chunks=(3, 16), compression="gzip", shuffle=True),
      neighbors=dict(chunks=(4, 50)),
      distances=dict(chunks=(17, 50), compression="gzip"))

# Element types and a paged fixed array (more chunks than one page of 1,024
# entries), for the reader's own tests.
with h5py.File("layouts.hdf5", "w", libver="latest") as f:
    f.create_dataset("paged", (1100, 2), dtype="<f4", chunks=(1, 2))[:] = matrix(1100, 2, 3)
    f.create_dataset("big-endian", (10, 3), dtype=">f4")[:] = matrix(10, 3, 4)
    f.create_dataset("float64", (10, 3), dtype="<f8")[:] = matrix(10, 3, 5).astype(np.float64)
    f.create_dataset("int64", (4, 3), dtype="<i8")[:] = np.array([[0, 1, -1], [2**31 - 1, -2**31, 7], [8, 9, 10], [11, 12, 13]])
    f.create_dataset("uint8", (2, 3), dtype="u1")[:] = [[0, 1, 255], [2, 3, 4]]
    f.create_dataset("too-big", (1,), dtype="<i8")[:] = [2**40]
    f.attrs["names"] = np.array([b"ab", b"cde"], dtype="S3")

# Features the reader refuses with ErrUnsupported.
with h5py.File("unsupported.hdf5", "w", libver="latest") as f:
    f.create_dataset("fletcher32", (4, 2), dtype="<f4", chunks=(2, 2), fletcher32=True)[:] = matrix(4, 2, 6)
    f.create_dataset("resizable", (4, 2), dtype="<f4", chunks=(2, 2), maxshape=(None, 2))[:] = matrix(4, 2, 7)
    f.create_dataset("compound", (2,), dtype=[("a", "<i4"), ("b", "<f4")])
    part = f.create_dataset("unwritten", (8, 2), dtype="<f4", chunks=(2, 2))
    part[0:2] = matrix(2, 2, 8)
    f.create_dataset("lzf", (4, 2), dtype="<f4", chunks=(2, 2), compression="lzf")[:] = matrix(4, 2, 9)

# Tiny files: the fuzz test's seeds.
write("tiny-earliest.hdf5", 3, 2, 2, "euclidean", 2,
      test=dict(chunks=(1, 2), compression="gzip", shuffle=True))
write("tiny-latest.hdf5", 3, 2, 2, "angular", 2, libver="latest",
      test=dict(chunks=(1, 2), compression="gzip", shuffle=True), neighbors=dict(chunks=(2, 2)))
