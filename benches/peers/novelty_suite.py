"""Held-out-class novelty suite (issue 24, maths §18). For each data set and each class
held out of the training set: the training set is 80 % of the other classes; the query
is the held-out class plus the remaining 20 % (known, in-distribution test points).
Reports, per task and as means over the hold-outs:
- AUROC of oose's `novelty` (held-out vs known) for every method, and of three peers
  fitted on the same training set in the same run: the mean distance to the 15 nearest
  training points, scikit-learn's LocalOutlierFactor(novelty=True) and IsolationForest;
- the false-alarm rate of `is_novel` at alpha = 0.05 and 0.01 on the known test points.

usage: novelty_suite.py DATA.npz NAME SEEDS [--pca 50] [--max-novel N] > table.md
DATA.npz holds x (N×D) and y (labels)."""
import argparse
import time

import numpy as np
from sklearn.decomposition import PCA
from sklearn.ensemble import IsolationForest
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import LocalOutlierFactor, NearestNeighbors

import oose

# Every registered method, through the registry (the same path as `oose fit`), with
# 10 components where it has them; landmark MDS with its default 500 landmarks.
PARAMS = {
    "pca": {"n_components": 10},
    "kpca": {"n_components": 10},
    "mds": {"n_components": 10},
    "landmark-mds": {"n_components": 10},
    "isomap": {"n_components": 10, "n_neighbors": 15},
    "dmaps": {"n_components": 10},
    "eigenmaps": {"n_components": 10},
    "spectral-clustering": {"n_clusters": 8},
    "lle": {"n_components": 10, "n_neighbors": 15},
    "interpolate": {},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("name")
    ap.add_argument("seeds", type=int)
    ap.add_argument("--pca", type=int, default=0)
    ap.add_argument("--max-novel", type=int, default=0)
    ap.add_argument("--methods", default=",".join(PARAMS))
    a = ap.parse_args()
    z = np.load(a.data, allow_pickle=True)
    x, y = z["x"].astype(np.float64), np.asarray(z["y"])
    names = a.methods.split(",")
    cols = names + ["knn15", "LOF", "IsolationForest"]
    auc = {c: [] for c in cols}
    fa = {m: {0.05: [], 0.01: []} for m in names}
    rows = []
    t0 = time.time()
    for c in np.unique(y):
        for seed in range(a.seeds):
            rng = np.random.default_rng(seed)
            known = np.flatnonzero(y != c)
            rng.shuffle(known)
            nt = int(0.2 * len(known))
            test, train = known[:nt], known[nt:]
            novel = np.flatnonzero(y == c)
            if a.max_novel:
                novel = novel[: a.max_novel]
            tr, q = x[train], np.vstack([x[novel], x[test]])
            if a.pca:
                p = PCA(a.pca, random_state=0).fit(tr)
                tr, q = p.transform(tr), p.transform(q)
            lab = np.r_[np.ones(len(novel)), np.zeros(len(test))]
            got = {}
            for m in names:
                # Interpolation is fitted on values: the first coordinate will do.
                values = np.ascontiguousarray(tr[:, :1]) if m == "interpolate" else None
                model = oose._oose.fit(m, np.ascontiguousarray(tr), PARAMS[m], values=values)
                _, d = model.extend(np.ascontiguousarray(q))
                got[m] = roc_auc_score(lab, d["novelty"])
                known_p = d["novelty_pvalue"][len(novel):]
                for alpha in (0.05, 0.01):
                    fa[m][alpha].append(np.mean(known_p <= alpha))
            dist, _ = NearestNeighbors(n_neighbors=15).fit(tr).kneighbors(q)
            got["knn15"] = roc_auc_score(lab, dist.mean(1))
            lof = LocalOutlierFactor(n_neighbors=20, novelty=True).fit(tr)
            got["LOF"] = roc_auc_score(lab, -lof.score_samples(q))
            iso = IsolationForest(random_state=seed).fit(tr)
            got["IsolationForest"] = roc_auc_score(lab, -iso.score_samples(q))
            for k, v in got.items():
                auc[k].append(v)
            rows.append((c, seed, len(train), len(novel), len(test), got))
    print(f"## {a.name}\n")
    print(f"{len(rows)} tasks ({len(np.unique(y))} classes held out × {a.seeds} seeds), "
          f"{time.time() - t0:.0f} s.\n")
    print("| held out | seed | train | novel | known | " + " | ".join(cols) + " |")
    print("|---|---|---|---|---|" + "---|" * len(cols))
    for c, seed, ntr, nn, nk, got in rows:
        print(f"| {c} | {seed} | {ntr} | {nn} | {nk} | " + " | ".join(f"{got[k]:.3f}" for k in cols) + " |")
    means = {k: float(np.mean(v)) for k, v in auc.items()}
    print("| **mean** | | | | | " + " | ".join(f"**{means[k]:.4f}**" for k in cols) + " |\n")
    best_peer = max(means[k] for k in ("knn15", "LOF", "IsolationForest"))
    print(f"best peer {best_peer:.4f}; oose novelty − best peer: "
          + ", ".join(f"{m} {means[m] - best_peer:+.4f}" for m in names) + "\n")
    print("False-alarm rate of is_novel on the known test points (mean over tasks; target "
          "[0.025, 0.075] at α = 0.05, [0, 0.02] at α = 0.01):\n")
    print("| method | α = 0.05 | α = 0.01 |\n|---|---|---|")
    for m in names:
        print(f"| {m} | {np.mean(fa[m][0.05]):.4f} | {np.mean(fa[m][0.01]):.4f} |")
    print()


if __name__ == "__main__":
    main()
