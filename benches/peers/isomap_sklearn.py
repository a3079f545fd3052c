"""scikit-learn Isomap on the same workload as benches/isomap.rs (data written by oose).

Prints one JSON line: median fit and transform times, eigenvalues, and the embedding
agreement with oose's (after the sign rule) when oose's embedding file is given.
"""
import json
import sys
import time

import numpy as np
from sklearn.manifold import Isomap


def median_time(f, reps):
    ts, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), out


def main(train_path, new_path, reps):
    x, z = np.load(train_path), np.load(new_path)
    m = Isomap(n_neighbors=10, n_components=2, eigen_solver="arpack")
    t_fit, _ = median_time(lambda: m.fit(x), reps)
    t_tr, _ = median_time(lambda: m.transform(z), reps)
    print(json.dumps({"fit_s": t_fit, "transform_s": t_tr,
                      "eigenvalues": m.kernel_pca_.eigenvalues_.tolist()}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
