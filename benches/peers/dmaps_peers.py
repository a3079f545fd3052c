"""datafold and pydiffmap on the workload of benches/dmaps.rs (data written by oose).

Same kernel as oose's exp(-r²/ε), ε = 0.02, α = 1, 2 coordinates:
* datafold: GaussianKernel(epsilon=ε/2) (its kernel is exp(-r²/(2ε_df))) with a
  distance cut-off at 2·sqrt(ε) (weights below e⁻⁴ dropped; datafold has no kNN rule);
* pydiffmap: from_sklearn(k=25, epsilon=ε/4) (its kernel is exp(-r²/(4ε_p))).
Prints one JSON line with median fit and transform times and the eigenvalues.
"""
import json
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def median_time(f, reps):
    ts, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), out


def main(train_path, new_path, reps):
    x, z = np.load(train_path), np.load(new_path)
    eps = 0.02
    out = {}
    import datafold.dynfold as dfold
    import datafold.pcfold as pfold

    def df_fit():
        return dfold.DiffusionMaps(
            kernel=pfold.GaussianKernel(epsilon=eps / 2, distance=dict(cut_off=2 * np.sqrt(eps))),
            n_eigenpairs=3, alpha=1.0, time_exponent=1, symmetrize_kernel=True,
        ).fit(x)

    t_fit, m = median_time(df_fit, reps)
    t_tr, _ = median_time(lambda: m.transform(z), reps)
    out["datafold"] = {"fit_s": t_fit, "transform_s": t_tr,
                       "eigenvalues": sorted(m.eigenvalues_.tolist(), reverse=True)[1:]}

    from pydiffmap import diffusion_map as pdm

    def pdm_fit():
        return pdm.DiffusionMap.from_sklearn(n_evecs=2, k=25, epsilon=eps / 4, alpha=1.0).fit(x)

    t_fit, m = median_time(pdm_fit, reps)
    t_tr, _ = median_time(lambda: m.transform(z), reps)
    out["pydiffmap"] = {"fit_s": t_fit, "transform_s": t_tr,
                        "eigenvalues": m.evals.tolist()}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
