"""The UMAP benchmark (run by benches/run_umap.sh): oose's CLI against umap-learn on
Fashion-MNIST PCA-50, one run, numbers as a markdown table.

umap-learn compiles its numba kernels on first use: its first fit in a process (cold)
includes that, its second fit (warm, same data and seed) does not. The fit ratio is
taken against the warm fit. Transform: oose's two strategies through the CLI (process
start, model load and file I/O included) against umap-learn's `transform` of the same
test images; single-point latency through the Python package when it is installed."""

import gzip
import os
import subprocess
import sys
import time

import numpy as np
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors

tmp, oose, n, m = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
THREADS = os.cpu_count()


def idx(path):
    b = gzip.open(path).read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)


p = "/usr/share/datasets/fashion-mnist/"
x_train = idx(p + "train-images-idx3-ubyte.gz").reshape(60000, -1)[:n] / 255.0
y_train = idx(p + "train-labels-idx1-ubyte.gz")[:n]
x_test = idx(p + "t10k-images-idx3-ubyte.gz").reshape(10000, -1)[:m] / 255.0
y_test = idx(p + "t10k-labels-idx1-ubyte.gz")[:m]
pca = PCA(50, random_state=0).fit(x_train)
train, test = pca.transform(x_train), pca.transform(x_test)
np.save(f"{tmp}/train.npy", train)
np.save(f"{tmp}/test.npy", test)
sample = np.random.default_rng(0).permutation(n)[: min(n, 5000)]


def knn_preservation(x, y, k=10):
    a = NearestNeighbors(n_neighbors=k + 1).fit(x).kneighbors(x, return_distance=False)[:, 1:]
    b = NearestNeighbors(n_neighbors=k + 1).fit(y).kneighbors(y, return_distance=False)[:, 1:]
    return np.mean([len(set(r) & set(s)) / k for r, s in zip(a, b)])


def quality(emb):
    return (
        trustworthiness(train[sample], emb[sample], n_neighbors=10),
        knn_preservation(train[sample], emb[sample]),
    )


def accuracy(emb, z):
    return KNeighborsClassifier(10).fit(emb, y_train).score(z, y_test)


def timed(f, repeat=1):
    ts, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return out, float(np.median(ts))


def oose_cli(*args):
    subprocess.run([oose, *args], check=True, stdout=subprocess.DEVNULL)


def info(model):
    out = subprocess.run([oose, "info", model], check=True, capture_output=True, text=True).stdout
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


rows = []
model = f"{tmp}/u.oose"
_, t_fit = timed(lambda: oose_cli("fit", "umap", "--input", f"{tmp}/train.npy", "--output", model))
oose_cli("embedding", model, "--output", f"{tmp}/emb.npy")
emb = np.load(f"{tmp}/emb.npy")
res = {}
for strategy in ("interpolation", "optimize"):
    out = f"{tmp}/z-{strategy}.npy"
    _, t = timed(
        lambda: oose_cli("extend", model, "--input", f"{tmp}/test.npy", "--output", out,
                         "--strategy", strategy),
        repeat=3,
    )
    res[strategy] = (t, accuracy(emb, np.load(out)))
inf = info(model)
rows.append((f"oose ({inf['knn_graph']} kNN, {inf['init_used']} init)", t_fit, *quality(emb), res))

import umap  # noqa: E402

cold, t_cold = timed(lambda: umap.UMAP(random_state=0).fit(train))
warm, t_warm = timed(lambda: umap.UMAP(random_state=0).fit(train))
zu, t_tr = timed(lambda: warm.transform(test))
_, t_tr2 = timed(lambda: warm.transform(test))
rows.append(("umap-learn (random_state=0: one thread)", t_warm, *quality(warm.embedding_),
             {"transform": (min(t_tr, t_tr2), accuracy(warm.embedding_, zu))}))
par, t_par = timed(lambda: umap.UMAP(n_jobs=THREADS).fit(train))
zp, t_trp = timed(lambda: par.transform(test))
rows.append((f"umap-learn (no seed: {THREADS} threads)", t_par, *quality(par.embedding_),
             {"transform": (t_trp, accuracy(par.embedding_, zp))}))

ceiling = KNeighborsClassifier(10).fit(train, y_train).score(test, y_test)
print(f"\n### Fashion-MNIST PCA-50: {n} training, {m} test images, {THREADS} threads\n")
print("| method | fit (s) | trustworthiness(10) | kNN preservation(10) | transform (s) | test 10-NN accuracy |")
print("|---|---|---|---|---|---|")
for name, tf, tw, kp, tr in rows:
    first = True
    for s, (tt, acc) in tr.items():
        lead = f"| {name} | {tf:.1f} | {tw:.4f} | {kp:.4f}" if first else "| | | |"
        print(f"{lead} | {s}: {tt:.3f} | {acc:.4f} |")
        first = False
print(f"\ninput-space 10-NN accuracy (the ceiling): {ceiling:.4f}")
print(f"umap-learn cold fit (numba compilation included): {t_cold:.1f} s")
o = rows[0]
print(f"fit time oose / umap-learn warm (seeded): {o[1] / t_warm:.2f} (target ≤ 0.5); "
      f"/ umap-learn parallel: {o[1] / t_par:.2f}")
t_ref = rows[1][4]["transform"][0]
for s in ("interpolation", "optimize"):
    print(f"transform speed-up {s} (CLI: process start, model load, files) vs umap-learn: "
          f"{t_ref / o[4][s][0]:.1f}×")

try:
    import oose as oose_py
except ImportError:
    print("(the oose Python package is not installed here: no single-point latency)")
    sys.exit(0)
est = oose_py.load(model)
print("\nIn process (Python, the model loaded once), the 10000 test images:")
for strategy in ("interpolation", "optimize"):
    est.set_params(strategy=strategy)
    z, t = timed(lambda: est.transform(test), repeat=3)
    print(f"oose {strategy} through Python: {t:.3f} s, accuracy {accuracy(emb, z):.4f}; "
          f"speed-up vs umap-learn's transform: {t_ref / t:.1f}×")
one = test[:1]
umap_one = []
for _ in range(5):
    t = time.perf_counter()
    warm.transform(one)
    umap_one.append(time.perf_counter() - t)
print(f"\nsingle point, median of 5, umap-learn transform: {1e3 * np.median(umap_one):.1f} ms")
for strategy in ("interpolation", "optimize"):
    est.set_params(strategy=strategy)
    ts = []
    for i in range(201):
        row = test[i % m : i % m + 1]
        t = time.perf_counter()
        est.transform(row)
        ts.append(time.perf_counter() - t)
    print(f"single point, median of 201, oose {strategy} through Python: "
          f"{1e3 * np.median(ts):.3f} ms (target ≤ 1 ms)")
