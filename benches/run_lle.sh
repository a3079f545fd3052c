#!/usr/bin/env bash
# Locally linear embedding against scikit-learn (standard, arpack) in one run: Swiss
# roll N = 5000 (seed 0), M = 5000 new (seed 1), noise 0.05, k = 10, d = 2. Prints
# medians and ratios sklearn/oose. Needs .venv (scripts/test creates it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p oose-cli
./target/release/oose dataset swiss-roll --n 5000 --noise 0.05 --seed 0 --output "$tmp/train.npy"
./target/release/oose dataset swiss-roll --n 5000 --noise 0.05 --seed 1 --output "$tmp/new.npy"
cargo bench -q -p oose-benches --bench lle -- --noplot 2>&1 | tee "$tmp/bench.log"
facts=$(grep OOSE_FACTS "$tmp/bench.log" | tail -1)
"$PY" benches/peers/lle_sklearn.py "$tmp/train.npy" "$tmp/new.npy" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$facts" <<'PYEOF'
import json, sys, pathlib
peer = json.load(open(sys.argv[1]))
facts = dict(kv.split("=", 1) for kv in sys.argv[2].split()[1:])
est = lambda name: json.load(open(pathlib.Path("target/criterion/lle_swiss_roll_n5000") / name / "new/estimates.json"))["median"]["point_estimate"] / 1e9
fit, tr = est("fit"), est("transform_m5000")
ours, theirs = float(facts["reconstruction_error"]), peer["reconstruction_error"]
print(f"oose lle: fit {fit:.3f} s (solver {facts['solver']}), transform 5000: {tr:.4f} s  [criterion medians]")
print(f"sklearn lle (arpack): fit {peer['fit_s']:.3f} s, transform {peer['transform_s']:.4f} s  [median of 3]")
print(f"fit ratio {peer['fit_s']/fit:.1f}x (target >= 5x), transform ratio {peer['transform_s']/tr:.1f}x (target >= 5x); "
      f"reconstruction_error {ours:.6e} vs {theirs:.6e} (rel diff {abs(ours-theirs)/theirs:.1e})")
PYEOF
