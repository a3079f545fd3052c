"""Which of a VAE's per-point numbers says "far from the training data" (maths §16):
Fashion-MNIST (Debian's dataset-fashion-mnist), VariationalAutoencoder(d = 2, layers
256, 64) on the first 20000 training images for 5 and 40 epochs; the mean posterior
variance, negative ELBO and is_novel (alpha = 0.01) of 2000 test images against 1000
uniform-noise images, 1000 test images with shuffled pixels and 1000 inverted ones."""

import sys
import time

import numpy as np

import oose

sys.path.insert(0, "benches/peers")
from fashion import pixels  # noqa: E402

X, _, T, _ = pixels(20000, 2000)
rng = np.random.default_rng(0)
far = {
    "uniform noise": rng.uniform(0, 1, (1000, 784)),
    "test images, pixels shuffled": np.array([r[rng.permutation(784)] for r in T[:1000]]),
    "test images, inverted": 1 - T[:1000],
}
for epochs in (5, 40):
    t0 = time.perf_counter()
    vae = oose.VariationalAutoencoder(2, layers=(256, 64), epochs=epochs, n_jobs=2).fit(X)
    _, dt = vae.transform(T, return_diagnostics=True)
    var_t = dt["posterior_variance"]
    print(f"{epochs} epochs ({vae.n_iter_} run, {time.perf_counter() - t0:.0f} s): test images: "
          f"mean posterior variance {var_t.mean():.3g}, negative ELBO {dt['negative_elbo'].mean():.1f}, "
          f"is_novel {dt['is_novel'].mean():.3f}")
    for name, Z in far.items():
        _, d = vae.transform(Z, return_diagnostics=True)
        v = d["posterior_variance"]
        print(f"   {name}: mean posterior variance {v.mean():.3g} (median {np.median(v):.3g}; "
              f"above the test median {np.mean(v > np.median(var_t)):.3f}), negative ELBO "
              f"{d['negative_elbo'].mean():.1f}, is_novel {d['is_novel'].mean():.3f}")
