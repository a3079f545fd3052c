"""The UMAP benchmark (run by benches/run_umap.sh): oose's CLI against umap-learn on
Fashion-MNIST PCA-50, one run, numbers as a markdown table.

umap-learn compiles its numba kernels on first use: its first fit in a process (cold)
includes that, its second fit (warm, same data and seed) does not. The fit ratio is
taken against the warm fit. Transform: oose's two strategies through the CLI (process
start, model load and file I/O included) against umap-learn's `transform` of the same
test images; single-point latency through the Python package when it is installed."""

import os
import time
import subprocess
import sys

import numpy as np

from fashion import Data, in_process, one_point_ms, timed

tmp, oose, n, m = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
THREADS = os.cpu_count()
data = Data(tmp, n, m)
train, test = data.train, data.test
quality, accuracy = data.quality, data.accuracy


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

ceiling = data.ceiling()
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

est = in_process(model, test, emb, accuracy, t_ref, "umap-learn",
                 {"interpolation": 3, "optimize": 3})
if est is None:
    sys.exit(0)
one = test[:1]
umap_one = []
for _ in range(5):
    t = time.perf_counter()
    warm.transform(one)
    umap_one.append(time.perf_counter() - t)
print(f"\nsingle point, median of 5, umap-learn transform: {1e3 * np.median(umap_one):.1f} ms")
for strategy in ("interpolation", "optimize"):
    print(f"single point, median of 201, oose {strategy} through Python: "
          f"{one_point_ms(est, test, strategy):.3f} ms (target ≤ 1 ms)")
