#!/usr/bin/env bash
# Novelty suite (issue 24, docs/diagnostics.md): held-out classes of scikit-learn's
# digits, Fashion-MNIST (Debian's dataset-fashion-mnist, 6000 training images, PCA-50)
# and scanpy's pbmc68k_reduced (bulk_labels; scanpy only in .venv-novelty). Prints one
# markdown table per data set: AUROC of `novelty` for every method against the 15-NN
# distance, LocalOutlierFactor and IsolationForest, and the false-alarm rates of
# is_novel. Needs .venv with oose built (scripts/test creates it); SEEDS (default 3)
# sets the seeds of digits and pbmc, Fashion-MNIST runs one.
. "$(dirname "$0")/common.sh"
PY=.venv/bin/python
seeds=${SEEDS:-3}
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist >/dev/null
fi
if [ ! -x .venv-novelty/bin/python ]; then
  python3 -m venv .venv-novelty
  .venv-novelty/bin/pip install -q scanpy
fi
.venv-novelty/bin/python - "$tmp" <<'PYEOF'
import sys, gzip, numpy as np, scanpy as sc
out = sys.argv[1]
a = sc.datasets.pbmc68k_reduced()  # shipped inside the scanpy wheel: no download
np.savez(f"{out}/pbmc.npz", x=np.asarray(a.obsm["X_pca"], float), y=a.obs["bulk_labels"].astype(str).values)
def idx(path):
    b = gzip.open(path).read(); nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)
p = "/usr/share/datasets/fashion-mnist/"
x = idx(p + "train-images-idx3-ubyte.gz").reshape(60000, -1) / 255.0
y = idx(p + "train-labels-idx1-ubyte.gz")
keep = np.random.default_rng(0).permutation(60000)[:6000]
np.savez(f"{out}/fmnist.npz", x=x[keep], y=y[keep])
PYEOF
"$PY" -c "import numpy as np; from sklearn.datasets import load_digits as l; d = l(); np.savez('$tmp/digits.npz', x=d.data, y=d.target)"
"$PY" benches/peers/novelty_suite.py "$tmp/digits.npz" "digits (1797 × 64)" "$seeds"
"$PY" benches/peers/novelty_suite.py "$tmp/pbmc.npz" "pbmc68k_reduced (700 cells × 50 PCs, bulk_labels)" "$seeds"
"$PY" benches/peers/novelty_suite.py "$tmp/fmnist.npz" "Fashion-MNIST (6000 images, PCA-50 of the training set)" 1 --pca 50
