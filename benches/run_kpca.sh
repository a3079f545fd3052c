#!/usr/bin/env bash
# Kernel PCA benchmark against scikit-learn in one run (issue: foundation).
# Swiss roll N = 5000 (seed 0), M = 20000 new points (seed 1), noise 0.05, gaussian
# kernel with ε = auto (median rule; sklearn gets gamma = 1/ε), 10 components.
# Prints medians and the ratios sklearn/oose. Needs .venv (scripts/test creates it).
. "$(dirname "$0")/common.sh"
PY=.venv/bin/python
dataset swiss-roll 5000 0 "$tmp/train.npy" --noise 0.05
dataset swiss-roll 20000 1 "$tmp/new.npy" --noise 0.05
criterion kpca
eps=$(sed -E 's/.*epsilon=([^ ]+).*/\1/' <<<"$facts")
"$PY" benches/peers/kpca_sklearn.py "$tmp/train.npy" "$tmp/new.npy" "$eps" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$facts" <<'PYEOF'
import json, sys
sys.path.insert(0, "benches/peers")
from report import facts as parse_facts, median
peer = json.load(open(sys.argv[1]))
facts = parse_facts(sys.argv[2])
est = lambda name: median("kpca_swiss_roll_n5000", name)
fit, ext = est("fit"), est("extend_m20000")
ext_nov = median("kpca_swiss_roll_n5000_novelty", "extend_m20000")
ours = [float(v) for v in facts["eigenvalues"].split(",")]
print(f"oose extend 20000 with the novelty columns: {ext_nov:.3f} s = {ext_nov/ext:.2f}x without (target <= 1.5x)")
print(f"oose: fit {fit:.3f} s (solver {facts['solver']}, residual rank {facts['residual_rank']}), extend 20000: {ext:.3f} s  [criterion medians]")
fastest = min(peer, key=lambda s: peer[s]["fit_s"])
for s, r in peer.items():
    dev = max(abs(a - b) / b for a, b in zip(ours, r["eigenvalues"]))
    print(f"sklearn {s:10s}: fit {r['fit_s']:.3f} s, transform {r['transform_s']:.3f} s; "
          f"fit ratio {r['fit_s']/fit:.1f}x, transform ratio {r['transform_s']/ext:.1f}x; max rel eigenvalue diff {dev:.1e}")
ext_lr = median("kpca_swiss_roll_n5000_lowrank", "extend_m20000")
best_t = min(r["transform_s"] for r in peer.values())
print(f"oose low-rank extend 20000 (rank {facts['residual_rank']} of 5000): {ext_lr:.3f} s = "
      f"{best_t/ext_lr:.1f}x the best sklearn transform (target >= 10x), {ext/ext_lr:.1f}x oose's exact "
      f"(target >= 3x); max bound {float(facts['lowrank_max_bound']):.1e} x max|y| (target <= 1e-8), "
      f"max deviation {float(facts['lowrank_max_deviation']):.1e} x max|y|, largest deviation/bound "
      f"{float(facts['lowrank_worst_ratio']):.1e} (must be <= 1)")
print(f"vs fastest sklearn fit ({fastest}): {peer[fastest]['fit_s']/fit:.1f}x (target >= 2x); "
      f"extension vs best sklearn transform: {min(r['transform_s'] for r in peer.values())/ext:.1f}x (target >= 10x)")
PYEOF
