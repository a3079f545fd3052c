#!/usr/bin/env bash
# Locally linear embedding against scikit-learn (arpack), each method, in one run: Swiss
# roll N = 5000 (seed 0), M = 5000 new (seed 1), noise 0.05, k = 10, d = 2. Prints
# medians and ratios sklearn/oose. Needs .venv (scripts/test creates it).
. "$(dirname "$0")/common.sh"
PY=.venv/bin/python
dataset swiss-roll 5000 0 "$tmp/train.npy" --noise 0.05
dataset swiss-roll 5000 1 "$tmp/new.npy" --noise 0.05
criterion lle
"$PY" benches/peers/lle_sklearn.py "$tmp/train.npy" "$tmp/new.npy" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$tmp/bench.log" <<'PYEOF'
import json, sys
sys.path.insert(0, "benches/peers")
from report import facts as parse_facts, median
peer = json.load(open(sys.argv[1]))
lines = [l for l in open(sys.argv[2]) if l.startswith("OOSE_FACTS")]
for line in lines:
    f = parse_facts(line)
    m = f["method"]
    est = lambda name: median(f"lle_{m}_swiss_roll_n5000", name)
    fit, tr = est("fit"), est("transform_m5000")
    ours = float(f["reconstruction_error"])
    print(f"{m}: oose fit {fit:.3f} s (solver {f['solver']}), transform 5000 {tr:.4f} s  [criterion medians]")
    p = peer[m]
    if "error" in p:
        print(f"{m}: sklearn (arpack) failed: {p['error']}")
        continue
    print(f"{m}: sklearn (arpack) fit {p['fit_s']:.3f} s, transform {p['transform_s']:.4f} s  [median of 3]")
    print(f"{m}: fit ratio {p['fit_s']/fit:.1f}x, transform ratio {p['transform_s']/tr:.1f}x (targets >= 5x); "
          f"reconstruction_error {ours:.6e} vs {p['reconstruction_error']:.6e}"
          + (" (scikit-learn's hessian is its LTSA: a different M)" if m == "hessian" else ""))
PYEOF
