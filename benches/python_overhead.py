"""Python-level overhead of `transform` (issue 6): the same extension of 1000 new points
timed inside Rust (crates/oose/examples/time_extend.rs on the saved model) and through
the Python estimator (`est.transform`: validation, conversion, the call, the copy out).
Run by benches/run_python_overhead.sh; prints medians and the overhead in per cent."""

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import oose

REPEATS = 201


def median_time(f):
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(example):
    cases = [
        ("kpca gaussian N=5000", oose.KernelPCA(n_components=2),
         oose.datasets.swiss_roll(5000, noise=0.05, random_state=0)),
        ("isomap k=10 N=2000", oose.Isomap(n_neighbors=10),
         oose.datasets.swiss_roll(2000, noise=0.05, random_state=0)),
        ("dmaps knn=25 N=5000", oose.DiffusionMaps(n_neighbors=25),
         oose.datasets.s_curve(5000, noise=0.0, random_state=0)),
    ]
    new = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, est, x in cases:
            new = (oose.datasets.s_curve if "dmaps" in name else oose.datasets.swiss_roll)(
                1000, noise=0.05 if "dmaps" not in name else 0.0, random_state=1)
            est.fit(x)
            model = Path(tmp) / "m.oose"
            points = Path(tmp) / "z.f64"
            est.save(model)
            np.ascontiguousarray(new, dtype="<f8").tofile(points)
            rust = float(subprocess.run(
                [example, str(model), str(points), "3", str(REPEATS)],
                capture_output=True, text=True, check=True).stdout)
            py = median_time(lambda: est.transform(new))
            print(f"{name}: rust {rust * 1e3:.3f} ms, python transform {py * 1e3:.3f} ms, "
                  f"overhead {100 * (py - rust) / rust:+.1f} %")


if __name__ == "__main__":
    main(sys.argv[1])
