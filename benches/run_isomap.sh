#!/usr/bin/env bash
# Isomap against scikit-learn in one run, and Landmark MDS at N = 10⁵ (time and peak
# memory). Swiss roll N = 5000 (seed 0), M = 5000 new (seed 1), noise 0.05, k = 10, d = 2.
# Prints medians and ratios sklearn/oose. Needs .venv (scripts/test creates it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p oose-cli
./target/release/oose dataset swiss-roll --n 5000 --noise 0.05 --seed 0 --output "$tmp/train.npy"
./target/release/oose dataset swiss-roll --n 5000 --noise 0.05 --seed 1 --output "$tmp/new.npy"
cargo bench -q -p oose-benches --bench isomap -- --noplot 2>&1 | tee "$tmp/bench.log"
facts=$(grep OOSE_FACTS "$tmp/bench.log" | tail -1)
"$PY" benches/peers/isomap_sklearn.py "$tmp/train.npy" "$tmp/new.npy" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$facts" <<'PYEOF'
import json, sys, pathlib
peer = json.load(open(sys.argv[1]))
facts = dict(kv.split("=", 1) for kv in sys.argv[2].split()[1:])
est = lambda name: json.load(open(pathlib.Path("target/criterion/isomap_swiss_roll_n5000") / name / "new/estimates.json"))["median"]["point_estimate"] / 1e9
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
