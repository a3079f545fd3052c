#!/usr/bin/env bash
# Diffusion maps against datafold (distance cut-off) and pydiffmap (k = 25) in one run,
# and the N = 10⁶ scale run (time and peak memory). S-curve N = 20000 (seed 0),
# M = 20000 new (seed 1), k = 25, ε = 0.02, α = 1, d = 2. Prints medians and ratios
# peer/oose. The peers live in .venv-datafold (scripts/test creates it; pydiffmap is
# added here). DMAPS_SCALE=0 skips the scale run.
. "$(dirname "$0")/common.sh"
datafold_python
dataset s-curve 20000 0 "$tmp/train.npy"
dataset s-curve 20000 1 "$tmp/new.npy"
criterion dmaps
"$PY" benches/peers/dmaps_peers.py "$tmp/train.npy" "$tmp/new.npy" 3 > "$tmp/peer.json"
"$PY" - "$tmp/peer.json" "$facts" <<'PYEOF'
import json, sys
sys.path.insert(0, "benches/peers")
from report import facts as parse_facts, median
peer = json.load(open(sys.argv[1]))
facts = parse_facts(sys.argv[2])
est = lambda name: median("dmaps_s_curve_n20000", name)
fit, tr = est("fit"), est("transform_m20000")
print(f"oose dmaps: fit {fit:.3f} s (solver {facts['solver']}, nnz {facts['nnz']}), transform 20000: {tr:.3f} s  [criterion medians]; eigenvalues {facts['eigenvalues']}")
for name, p in peer.items():
    print(f"{name}: fit {p['fit_s']:.3f} s, transform {p['transform_s']:.3f} s  [median of 3]; eigenvalues {p['eigenvalues']}")
best_fit = min(p["fit_s"] for p in peer.values())
best_tr = min(p["transform_s"] for p in peer.values())
print(f"fit ratio vs the faster peer {best_fit/fit:.1f}x (target >= 10x), transform ratio {best_tr/tr:.1f}x (target >= 5x)")
PYEOF
# Scale run: N = 10⁶ S-curve, k = 25, ε by the log-slope rule.
[ "${DMAPS_SCALE:-1}" = 0 ] && exit 0
./target/release/oose dataset s-curve --n 1000000 --seed 2 --output "$tmp/big.npy"
/usr/bin/time -f "dmaps N=1000000, k=25: fit (CLI, incl. reading 24 MB) %e s, peak RSS %M KiB" \
    ./target/release/oose fit dmaps --input "$tmp/big.npy" --knn 25 --epsilon log-slope --output "$tmp/dm.oose"
./target/release/oose info "$tmp/dm.oose" | grep -E 'epsilon|solver|eigenvalues|nnz'
/usr/bin/time -f "dmaps extend 1000000 points: %e s, peak RSS %M KiB" \
    ./target/release/oose extend "$tmp/dm.oose" --input "$tmp/big.npy" --output "$tmp/dm_ext.npy"
