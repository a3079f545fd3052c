"""scikit-learn LocallyLinearEmbedding (arpack) on the workload of benches/lle.rs (data
written by oose), each method. Prints one JSON object: per method, the median fit and
transform times and reconstruction_error_ (or the error scikit-learn raised)."""
import json
import sys
import time

import numpy as np
from sklearn.manifold import LocallyLinearEmbedding

METHODS = ("standard", "modified", "hessian", "ltsa")


def median_time(f, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def main(train_path, new_path, reps):
    x, z = np.load(train_path), np.load(new_path)
    out = {}
    for method in METHODS:
        m = LocallyLinearEmbedding(n_neighbors=10, n_components=2, eigen_solver="arpack",
                                   method=method, random_state=0)
        try:
            t_fit = median_time(lambda: m.fit(x), reps)
        except ValueError as e:
            out[method] = {"error": str(e).split(".")[0]}
            continue
        t_tr = median_time(lambda: m.transform(z), reps)
        out[method] = {"fit_s": t_fit, "transform_s": t_tr,
                       "reconstruction_error": float(m.reconstruction_error_)}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
