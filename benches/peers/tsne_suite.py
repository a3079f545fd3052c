"""The t-SNE benchmark (run by benches/run_tsne.sh): oose's CLI, openTSNE and
scikit-learn on Fashion-MNIST PCA-50, one run, numbers as a markdown table; then oose's
transform in process through the Python package (as openTSNE's is timed) and one
point's latency."""

import os
import subprocess
import sys

import numpy as np

from fashion import Data, in_process, one_point_ms, timed

tmp, oose, n, m, with_sklearn, exact_n = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
THREADS = os.cpu_count()
data = Data(tmp, n, m)
train, test = data.train, data.test
quality, accuracy = data.quality, data.accuracy

rows = []


def oose_cli(*args):
    subprocess.run([oose, *args], check=True, stdout=subprocess.DEVNULL)


def info(model):
    out = subprocess.run([oose, "info", model], check=True, capture_output=True, text=True).stdout
    return dict(line.split(": ", 1) for line in out.splitlines())


model = f"{tmp}/t.oose"
_, t_fit = timed(lambda: oose_cli("fit", "tsne", "--input", f"{tmp}/train.npy", "--output", model))
oose_cli("embedding", model, "--output", f"{tmp}/emb.npy")
emb = np.load(f"{tmp}/emb.npy")
kl = float(info(model)["kl_divergence"])
res = {}
for strategy in ("interpolation", "optimize"):
    out = f"{tmp}/z-{strategy}.npy"
    _, t = timed(
        lambda: oose_cli("extend", model, "--input", f"{tmp}/test.npy", "--output", out,
                         "--strategy", strategy),
        repeat=3 if strategy == "interpolation" else 1,
    )
    res[strategy] = (t, accuracy(emb, np.load(out)))
rows.append((f"oose ({info(model)['gradient_method']}, {info(model)['knn_graph']} kNN)", t_fit, kl, *quality(emb), res))

from openTSNE import TSNE as OpenTSNE  # noqa: E402

ot, t_fit = timed(lambda: OpenTSNE(n_jobs=THREADS, random_state=0, negative_gradient_method="fft").fit(train))
zt, t_tr = timed(lambda: ot.transform(test))
rows.append(("openTSNE (FFT)", t_fit, float(ot.kl_divergence), *quality(np.asarray(ot)),
             {"transform": (t_tr, accuracy(np.asarray(ot), zt))}))

if with_sklearn:
    from sklearn.manifold import TSNE as SkTSNE

    sk, t_fit = timed(lambda: SkTSNE(random_state=0, init="pca", n_jobs=THREADS).fit(train))
    rows.append(("scikit-learn (Barnes–Hut)", t_fit, float(sk.kl_divergence_), *quality(sk.embedding_), {}))



def exact_kl(x, y, perplexity=30.0):
    """KL(P‖Q) of the embedding y, summed over all pairs (not the fit's own estimate,
    whose Z is approximate under Barnes–Hut and FFT), with P from scikit-learn's
    `_joint_probabilities_nn` on the exact k = ⌊3·perplexity⌋ + 1 neighbours (oose's P
    equals it to 1e-10)."""
    from sklearn.manifold._t_sne import _joint_probabilities_nn
    from sklearn.neighbors import NearestNeighbors

    k = min(len(x) - 1, int(3 * perplexity + 1))
    dist = NearestNeighbors(n_neighbors=k).fit(x).kneighbors_graph(mode="distance")
    dist.data **= 2
    p = _joint_probabilities_nn(dist, perplexity, 0).tocoo()
    w = 1.0 / (1.0 + ((y[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(w, 0.0)
    q = w[p.row, p.col] / w.sum()
    return float((p.data * np.log(p.data / q)).sum())


# The gradients: exact against Barnes–Hut and FFT on the first exact_n training images:
# the fit's own final KL, and the exact KL of its final embedding.
kls = {}
if exact_n > 0:
    np.save(f"{tmp}/small.npy", train[:exact_n])
    for method in ("exact", "barnes-hut", "fft"):
        small = f"{tmp}/small-{method}.oose"
        _, t = timed(lambda: oose_cli("fit", "tsne", "--input", f"{tmp}/small.npy", "--output", small,
                                      "--method", method, "--embedding", f"{tmp}/small-{method}.npy"))
        y = np.load(f"{tmp}/small-{method}.npy")
        kls[method] = (exact_kl(train[:exact_n], y), t, float(info(small)["kl_divergence"]))

ceiling = data.ceiling()
print(f"\n### Fashion-MNIST PCA-50: {n} training, {m} test images, {THREADS} threads\n")
print("| method | fit (s) | KL | trustworthiness(10) | kNN preservation(10) | transform (s) | test 10-NN accuracy |")
print("|---|---|---|---|---|---|---|")
for name, tf, k, tw, kp, tr in rows:
    first = True
    for s, (tt, acc) in (tr or {"—": (float("nan"), float("nan"))}).items():
        lead = f"| {name} | {tf:.1f} | {k:.4f} | {tw:.4f} | {kp:.4f}" if first else "| | | | |"
        print(f"{lead} | {s}: {tt:.3f} | {acc:.4f} |")
        first = False
print(f"\ninput-space 10-NN accuracy (the ceiling): {ceiling:.4f}")
o, ref = rows[0], rows[1]
print(f"fit time oose / openTSNE: {o[1] / ref[1]:.2f} (target ≤ 0.67); KL oose / openTSNE: {o[2] / ref[2]:.4f} (target ≤ 1.02)")
for method, (k, t, own) in kls.items():
    print(f"N = {exact_n}, {method} gradient: final KL {k:.4f} (the fit's own estimate {own:.4f}) in {t:.1f} s")
if len(kls) == 3:
    for m in ("barnes-hut", "fft"):
        print(f"{m} / exact final KL: {kls[m][0] / kls['exact'][0]:.4f} (target within 1 %)")
t_ref = ref[5]["transform"][0]
for s in ("interpolation", "optimize"):
    print(f"transform speed-up {s} (CLI: process start, model load, files) vs openTSNE: "
          f"{t_ref / o[5][s][0]:.1f}×")

# In process, like openTSNE's transform: the model loaded once by the Python package.
est = in_process(model, test, emb, accuracy, t_ref, "openTSNE",
                 {"interpolation": 3, "optimize": 1})
if est is not None:
    print("single point, median of 201, oose interpolation through Python: "
          f"{one_point_ms(est, test, 'interpolation'):.3f} ms")
