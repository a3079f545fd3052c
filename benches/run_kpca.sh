#!/usr/bin/env bash
# Kernel PCA benchmark against scikit-learn in one run (issue: foundation).
# Swiss roll N = 5000 (seed 0), M = 20000 new points (seed 1), noise 0.05, gaussian
# kernel with ε = auto (median rule; sklearn gets gamma = 1/ε), 10 components.
# Prints medians and the ratios sklearn/oose. Needs .venv (scripts/test creates it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p oose-cli
./target/release/oose dataset swiss-roll --n 5000 --noise 0.05 --seed 0 --output "$tmp/train.npy"
./target/release/oose dataset swiss-roll --n 20000 --noise 0.05 --seed 1 --output "$tmp/new.npy"
cargo bench -q -p oose-benches --bench kpca -- --noplot 2>&1 | tee "$tmp/bench.log"
facts=$(grep OOSE_FACTS "$tmp/bench.log" | tail -1)
eps=$(sed -E 's/.*epsilon=([^ ]+).*/\1/' <<<"$facts")
"$PY" benches/peers/kpca_sklearn.py "$tmp/train.npy" "$tmp/new.npy" "$eps" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$facts" <<'PYEOF'
import json, sys, pathlib
peer = json.load(open(sys.argv[1]))
facts = dict(kv.split("=", 1) for kv in sys.argv[2].split()[1:])
est = lambda name: json.load(open(pathlib.Path("target/criterion/kpca_swiss_roll_n5000") / name / "new/estimates.json"))["median"]["point_estimate"] / 1e9
fit, ext = est("fit"), est("extend_m20000")
ours = [float(v) for v in facts["eigenvalues"].split(",")]
print(f"oose: fit {fit:.3f} s (solver {facts['solver']}, residual rank {facts['residual_rank']}), extend 20000: {ext:.3f} s  [criterion medians]")
fastest = min(peer, key=lambda s: peer[s]["fit_s"])
for s, r in peer.items():
    dev = max(abs(a - b) / b for a, b in zip(ours, r["eigenvalues"]))
    print(f"sklearn {s:10s}: fit {r['fit_s']:.3f} s, transform {r['transform_s']:.3f} s; "
          f"fit ratio {r['fit_s']/fit:.1f}x, transform ratio {r['transform_s']/ext:.1f}x; max rel eigenvalue diff {dev:.1e}")
print(f"vs fastest sklearn fit ({fastest}): {peer[fastest]['fit_s']/fit:.1f}x (target >= 2x); "
      f"extension vs best sklearn transform: {min(r['transform_s'] for r in peer.values())/ext:.1f}x (target >= 10x)")
PYEOF
