#!/usr/bin/python3
"""Turns fastText's print-sentence-vectors output (one line of DIM floats per
input line) into NAME.base.fvecs and NAME.query.fvecs: rows whose vectors are
all zero or repeat an earlier row's vector are dropped (the kept sentences go
to NAME.texts.txt, base first, then queries), the last NQ kept rows are the
queries, so a query never equals a base vector.

    vecs_from_text.py VECTORS.txt SENTENCES.txt OUTDIR/NAME NQ
"""
import sys

import numpy as np

vec_path, text_path, prefix, nq = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rows, texts, seen = [], [], set()
with open(vec_path) as vf, open(text_path) as tf:
    for line, text in zip(vf, tf):
        v = np.array(line.split(), dtype=np.float32)
        key = v.tobytes()
        if not v.any() or key in seen or not np.isfinite(v).all():
            continue
        seen.add(key)
        rows.append(v)
        texts.append(text)
x = np.stack(rows)
n, d = x.shape
if n <= nq:
    sys.exit(f"only {n} distinct vectors")


def save(path, m):
    rec = np.empty((len(m), d + 1), dtype=np.float32)
    rec[:, 0] = np.array([d], dtype=np.int32).view(np.float32)[0]
    rec[:, 1:] = m
    rec.tofile(path)


save(prefix + ".base.fvecs", x[: n - nq])
save(prefix + ".query.fvecs", x[n - nq:])
with open(prefix + ".texts.txt", "w") as f:
    f.writelines(texts)
norms = np.linalg.norm(x, axis=1)
print(f"{n - nq} base and {nq} query vectors of dimension {d}; L2 norms {norms.min():.3f}..{norms.max():.3f}", file=sys.stderr)
