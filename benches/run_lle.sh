#!/usr/bin/env bash
# Locally linear embedding against scikit-learn (standard, arpack) in one run: Swiss
# roll N = 5000 (seed 0), M = 5000 new (seed 1), noise 0.05, k = 10, d = 2. Prints
# medians and ratios sklearn/oose. Needs .venv (scripts/test creates it).
. "$(dirname "$0")/common.sh"
PY=.venv/bin/python
dataset swiss-roll 5000 0 "$tmp/train.npy" --noise 0.05
dataset swiss-roll 5000 1 "$tmp/new.npy" --noise 0.05
criterion lle
"$PY" benches/peers/lle_sklearn.py "$tmp/train.npy" "$tmp/new.npy" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$facts" <<'PYEOF'
import json, sys
sys.path.insert(0, "benches/peers")
from report import facts as parse_facts, median
peer = json.load(open(sys.argv[1]))
facts = parse_facts(sys.argv[2])
est = lambda name: median("lle_swiss_roll_n5000", name)
fit, tr = est("fit"), est("transform_m5000")
ours, theirs = float(facts["reconstruction_error"]), peer["reconstruction_error"]
print(f"oose lle: fit {fit:.3f} s (solver {facts['solver']}), transform 5000: {tr:.4f} s  [criterion medians]")
print(f"sklearn lle (arpack): fit {peer['fit_s']:.3f} s, transform {peer['transform_s']:.4f} s  [median of 3]")
print(f"fit ratio {peer['fit_s']/fit:.1f}x (target >= 5x), transform ratio {peer['transform_s']/tr:.1f}x (target >= 5x); "
      f"reconstruction_error {ours:.6e} vs {theirs:.6e} (rel diff {abs(ours-theirs)/theirs:.1e})")
PYEOF
