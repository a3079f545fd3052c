"""Nearest training points of new points by maintained approximate-nearest-neighbour
libraries, for comparison with oose's graph walk (run_ann.sh prints that first, on
the same files): hnswlib (HNSW, M = 8 and 16, ef_construction 200, several ef) and
faiss (IVF with 256 lists, several nprobe), both in float32 as they store vectors, on
the same number of threads. Prints each setting's query time (median of five), its
microseconds a query and its recall against the exact neighbours (faiss's flat
index). What t-SNE's and UMAP's `interpolation` extension needs of a search is the
new points' k = 16 nearest training points (maths §12).

usage: ann_peers.py TRAIN.npy TEST.npy K THREADS
"""

import os
import sys

import faiss
import hnswlib
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from fashion import timed  # noqa: E402

train, test = np.load(sys.argv[1]), np.load(sys.argv[2])
k, threads = int(sys.argv[3]), int(sys.argv[4])
faiss.omp_set_num_threads(threads)
xf, qf = train.astype(np.float32), test.astype(np.float32)
d = train.shape[1]


flat = faiss.IndexFlatL2(d)
flat.add(xf)
(_, truth), t_exact = timed(lambda: flat.search(qf, k))


def recall(found):
    return np.mean([len(set(a) & set(b)) / k for a, b in zip(found, truth)])


def line(name, t, found):
    print(f"{name}: {t:.3f} s ({t / len(test) * 1e6:.2f} µs a query), "
          f"recall {recall(found):.4f}")


print(f"{len(test)} queries, {len(train)} training points, {d} dimensions, k = {k}, "
      f"{threads} threads; faiss flat (exact) {t_exact:.3f} s")
for m in (8, 16):
    index = hnswlib.Index(space="l2", dim=d)
    index.init_index(len(train), M=m, ef_construction=200, random_seed=0)
    index.set_num_threads(threads)
    index.add_items(train)
    for ef in (16, 32, 48, 64):
        index.set_ef(ef)
        (found, _), t = timed(lambda: index.knn_query(test, k=k, num_threads=threads), 5)
        line(f"hnswlib M={m} ef={ef}", t, found)
ivf = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, 256)
ivf.train(xf)
ivf.add(xf)
for nprobe in (4, 8, 16):
    ivf.nprobe = nprobe
    (_, found), t = timed(lambda: ivf.search(qf, k), 5)
    line(f"faiss IVF256 nprobe={nprobe}", t, found)
