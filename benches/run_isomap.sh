#!/usr/bin/env bash
# Isomap against scikit-learn in one run, and Landmark MDS at N = 10⁵ (time and peak
# memory). Swiss roll N = 5000 (seed 0), M = 5000 new (seed 1), noise 0.05, k = 10, d = 2.
# Prints medians and ratios sklearn/oose. Needs .venv (scripts/test creates it).
. "$(dirname "$0")/common.sh"
PY=.venv/bin/python
dataset swiss-roll 5000 0 "$tmp/train.npy" --noise 0.05
dataset swiss-roll 5000 1 "$tmp/new.npy" --noise 0.05
criterion isomap
"$PY" benches/peers/isomap_sklearn.py "$tmp/train.npy" "$tmp/new.npy" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$facts" <<'PYEOF'
import json, sys
sys.path.insert(0, "benches/peers")
from report import facts as parse_facts, median
peer = json.load(open(sys.argv[1]))
facts = parse_facts(sys.argv[2])
est = lambda name: median("isomap_swiss_roll_n5000", name)
fit, tr = est("fit"), est("transform_m5000")
ours = [float(v) for v in facts["eigenvalues"].split(",")]
dev = max(abs(a - b) / b for a, b in zip(ours, peer["eigenvalues"]))
print(f"oose isomap: fit {fit:.3f} s (solver {facts['solver']}), transform 5000: {tr:.3f} s  [criterion medians]")
print(f"sklearn isomap (arpack): fit {peer['fit_s']:.3f} s, transform {peer['transform_s']:.3f} s  [median of 3]")
print(f"fit ratio {peer['fit_s']/fit:.1f}x (target >= 4x), transform ratio {peer['transform_s']/tr:.1f}x (target >= 5x); max rel eigenvalue diff {dev:.1e}")
PYEOF
# Landmark MDS, N = 10⁵, 500 max-min landmarks: wall time and peak resident memory.
./target/release/oose dataset swiss-roll --n 100000 --noise 0.05 --seed 2 --output "$tmp/big.npy"
/usr/bin/time -f "landmark-mds N=100000, 500 landmarks: fit (CLI, incl. reading 2.4 MB) %e s, peak RSS %M KiB" \
    ./target/release/oose fit landmark-mds --input "$tmp/big.npy" --landmarks 500 --output "$tmp/lm.oose"
/usr/bin/time -f "landmark-mds extend 100000 points: %e s, peak RSS %M KiB" \
    ./target/release/oose extend "$tmp/lm.oose" --input "$tmp/big.npy" --output "$tmp/lm_ext.npy"
