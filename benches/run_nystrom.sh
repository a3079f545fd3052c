#!/usr/bin/env bash
# Kernel PCA through landmarks (issue 18), one run of each:
#  1. landmark quality at equal r (100, 300): Procrustes error of the Nyström embedding
#     against the exact kernel PCA embedding, Swiss roll N = 20000, d = 10, gaussian
#     ε auto: P-greedy, max-min, random (mean of 3 seeds) and scikit-learn's
#     Nystroem + PCA (mean of 3 seeds);
#  2. scale: `oose fit kpca --landmarks 500 --components 10` streamed from a .npy file
#     of N = 10⁷ Swiss-roll points (wall time and peak RSS from /usr/bin/time), and at
#     N = 10⁶ oose (Python, in memory) against scikit-learn's Nystroem(500) + PCA(10),
#     NYSTROM_PAIRS (default 5) alternated runs of each (medians);
#  3. the 10⁷ fit on a Dask LocalCluster (2 worker processes), embedding written with
#     dask.array.to_npy_stack.
# Set NYSTROM_N to change 10⁷ (e.g. 2000000 for a quick look). Environment:
# .venv-nystrom (oose built in release by maturin, scikit-learn, dask[distributed]),
# created here.
. "$(dirname "$0")/common.sh"
oose_env .venv-nystrom numpy scikit-learn "dask[distributed]"
PY=.venv-nystrom/bin/python
BIG=${NYSTROM_N:-10000000}
dataset swiss-roll 20000 0 "$tmp/q.npy" --noise 0.05
echo "== landmark quality (N = 20000, d = 10)"
"$PY" benches/peers/nystrom_suite.py quality "$tmp/q.npy" | tee "$tmp/quality.json"

echo "== scale"
dataset swiss-roll 1000000 1 "$tmp/m.npy" --noise 0.05
dataset swiss-roll "$BIG" 2 "$tmp/big.npy" --noise 0.05
/usr/bin/time -v ./target/release/oose fit kpca --landmarks 500 --components 10 \
  --input "$tmp/big.npy" --output "$tmp/big.oose" --embedding "$tmp/big_y.npy" 2> "$tmp/time.log"
wall=$(grep "Elapsed (wall clock)" "$tmp/time.log" | awk '{print $NF}')
rss=$(grep "Maximum resident set size" "$tmp/time.log" | awk '{print $NF}')
eps=$(./target/release/oose info "$tmp/big.oose" | sed -n 's/^epsilon: //p')
echo "oose CLI, N = $BIG, r = 500, d = 10: wall $wall, peak RSS $((rss / 1024)) MiB (epsilon $eps)"
./target/release/oose info "$tmp/big.oose" | grep -E "n_landmarks|missed_trace|eigenvalues"
rm -f "$tmp/big_y.npy"
# NYSTROM_PAIRS runs of each, alternated (the machine is shared: its speed drifts by
# 10 % within minutes, scikit-learn's more than oose's); medians and the ratio of the
# medians.
for i in $(seq "${NYSTROM_PAIRS:-5}"); do
  "$PY" benches/peers/nystrom_suite.py oose "$tmp/m.npy" 500 10 | tee -a "$tmp/oose_m.json"
  "$PY" benches/peers/nystrom_suite.py sklearn "$tmp/m.npy" 500 10 "$eps" | tee -a "$tmp/sk_m.json"
done
"$PY" - "$tmp/oose_m.json" "$tmp/sk_m.json" <<'PYEOF'
import json, statistics, sys
o, s = ([json.loads(line) for line in open(p)] for p in sys.argv[1:])
to, ts = (statistics.median(r["seconds"] for r in runs) for runs in (o, s))
print(f"N = 10^6, medians of {len(o)}: oose {to:.2f} s (peak RSS {max(r['peak_rss_gib'] for r in o):.2f} GiB), "
      f"scikit-learn Nystroem+PCA {ts:.1f} s (peak RSS {max(r['peak_rss_gib'] for r in s):.2f} GiB): "
      f"oose {ts / to:.1f}x faster (target >= 5x); per pair "
      + ", ".join(f"{b['seconds'] / a['seconds']:.1f}x" for a, b in zip(o, s)))
PYEOF

echo "== Dask LocalCluster (2 processes), N = $BIG"
"$PY" benches/peers/nystrom_suite.py dask "$tmp/big.npy" 500 10 "$tmp/dask_y" | tee "$tmp/dask.json"
