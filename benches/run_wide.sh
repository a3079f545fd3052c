#!/usr/bin/env bash
# Wide data (maths §1, exact distances summed many at a time): Fashion-MNIST pixels, no
# PCA — WIDE_N (default 10000) training images × 784 and WIDE_M (default 2000) test
# images, from Debian's dataset-fashion-mnist. The release CLI, median of three runs
# each: diffusion maps (k = 25, ε by the median rule) fit and extend, kernel PCA (ε by
# the median rule) fit and extend, Landmark MDS (max–min landmarks) fit; each extend
# with the coordinates alone (as the peers' transforms) and with `--diagnostics`
# (novelty, residual). In the same run, the
# peers on the same data in .venv-datafold (scripts/test creates it): pydiffmap
# (scikit-learn's kNN, k = 25, oose's ε) and scikit-learn's KernelPCA (its gamma =
# 1/oose's ε, 2 components). Prints medians and ratios peer/oose. Then kernel PCA's
# transform in process (the Python package built in release into .venv-wide) with and
# without diagnostics, against scikit-learn's KernelPCA.transform.
. "$(dirname "$0")/common.sh"
datafold_python
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist >/dev/null
fi
"$PY" - "$tmp" "${WIDE_N:-10000}" "${WIDE_M:-2000}" <<'PYEOF'
import gzip, sys
import numpy as np
tmp, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def idx(path):
    b = gzip.open(path).read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)
p = "/usr/share/datasets/fashion-mnist/"
np.save(f"{tmp}/train.npy", idx(p + "train-images-idx3-ubyte.gz").reshape(60000, -1)[:n] / 255.0)
np.save(f"{tmp}/test.npy", idx(p + "t10k-images-idx3-ubyte.gz").reshape(10000, -1)[:m] / 255.0)
PYEOF
oose=./target/release/oose
# median3 CMD…: the median wall time of three runs of CMD (seconds).
median3() {
  local ts=()
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    ts+=("$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')")
  done
  printf '%s\n' "${ts[@]}" | sort -g | sed -n 2p
}
dm_fit=$(median3 $oose fit dmaps --input "$tmp/train.npy" --knn 25 --output "$tmp/dm.oose")
dm_ext=$(median3 $oose extend "$tmp/dm.oose" --input "$tmp/test.npy" --output "$tmp/dm.npy")
dm_diag=$(median3 $oose extend "$tmp/dm.oose" --input "$tmp/test.npy" --diagnostics --output "$tmp/dmd.npy")
dm_eps=$($oose info "$tmp/dm.oose" | sed -n 's/^epsilon: //p')
kp_fit=$(median3 $oose fit kpca --input "$tmp/train.npy" --output "$tmp/kp.oose")
kp_eps=$($oose info "$tmp/kp.oose" | sed -n 's/^epsilon: //p')
kp_ext=$(median3 $oose extend "$tmp/kp.oose" --input "$tmp/test.npy" --output "$tmp/kp.npy")
kp_diag=$(median3 $oose extend "$tmp/kp.oose" --input "$tmp/test.npy" --diagnostics --output "$tmp/kpd.npy")
lm_fit=$(median3 $oose fit landmark-mds --input "$tmp/train.npy" --output "$tmp/lm.oose")
"$PY" - "$tmp" "$dm_eps" "$kp_eps" "$dm_fit" "$dm_ext" "$kp_fit" "$lm_fit" "$dm_diag" "$kp_ext" "$kp_diag" <<'PYEOF'
import sys, time, warnings
import numpy as np
warnings.filterwarnings("ignore")
tmp = sys.argv[1]
dm_eps, kp_eps, dm_fit, dm_ext, kp_fit, lm_fit, dm_diag, kp_ext, kp_diag = map(float, sys.argv[2:])
x, z = np.load(f"{tmp}/train.npy"), np.load(f"{tmp}/test.npy")
def median3(f):
    ts = []
    for _ in range(3):
        t = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t)
    return sorted(ts)[1], out
from pydiffmap import diffusion_map as pdm
p_fit, m = median3(lambda: pdm.DiffusionMap.from_sklearn(n_evecs=2, k=25, epsilon=dm_eps / 4, alpha=1.0).fit(x))
p_ext, _ = median3(lambda: m.transform(z))
from sklearn.decomposition import KernelPCA
s_fit, skp = median3(lambda: KernelPCA(2, kernel="rbf", gamma=1.0 / kp_eps).fit(x))
s_ext, _ = median3(lambda: skp.transform(z))
print(f"{x.shape[0]} x {x.shape[1]} Fashion-MNIST pixels, {z.shape[0]} new (medians of 3)")
print(f"diffusion maps k=25, eps {dm_eps:.4g}: oose fit {dm_fit:.2f} s, extend {dm_ext:.2f} s (CLI, incl. I/O); "
      f"pydiffmap fit {p_fit:.2f} s, transform {p_ext:.2f} s: ratio fit {p_fit/dm_fit:.1f}x, extend {p_ext/dm_ext:.1f}x; "
      f"extend --diagnostics {dm_diag:.2f} s")
print(f"kernel PCA, eps auto ({kp_eps:.4g}): oose fit {kp_fit:.2f} s, extend {kp_ext:.2f} s (CLI, incl. I/O); "
      f"scikit-learn fit {s_fit:.2f} s, transform {s_ext:.2f} s: ratio fit {s_fit/kp_fit:.1f}x, extend {s_ext/kp_ext:.1f}x; "
      f"extend --diagnostics {kp_diag:.2f} s")
print(f"Landmark MDS (max-min): oose fit {lm_fit:.2f} s (CLI)")
PYEOF
oose_env .venv-wide scikit-learn
.venv-wide/bin/python benches/peers/kpca_transform.py "$tmp/train.npy" "$tmp/test.npy" "$tmp/kp.oose"
