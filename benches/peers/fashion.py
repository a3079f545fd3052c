"""Shared by the Fashion-MNIST benchmarks (tsne_suite.py, umap_suite.py,
autoencoder_suite.py, vae_far.py): the data
(Debian's dataset-fashion-mnist, PCA-50 fitted on the training images), the quality
measures of maths §17, a timer, and oose's transform timed in process."""

import gzip
import time

import numpy as np
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors

PATH = "/usr/share/datasets/fashion-mnist/"


def _idx(path):
    b = gzip.open(path).read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)


def pixels(n, m):
    """The first n training and m test images as rows of pixels / 255, with labels."""
    x = _idx(PATH + "train-images-idx3-ubyte.gz").reshape(60000, -1)[:n] / 255.0
    y = _idx(PATH + "train-labels-idx1-ubyte.gz")[:n]
    xt = _idx(PATH + "t10k-images-idx3-ubyte.gz").reshape(10000, -1)[:m] / 255.0
    yt = _idx(PATH + "t10k-labels-idx1-ubyte.gz")[:m]
    return x, y, xt, yt


class Data:
    """The first n training and m test images, PCA-50 (fitted on the n), saved as
    train.npy and test.npy in `tmp`; a 5000-point sample of the training images for
    the quality measures."""

    def __init__(self, tmp, n, m):
        x_train, self.y_train, x_test, self.y_test = pixels(n, m)
        pca = PCA(50, random_state=0).fit(x_train)
        self.train, self.test = pca.transform(x_train), pca.transform(x_test)
        np.save(f"{tmp}/train.npy", self.train)
        np.save(f"{tmp}/test.npy", self.test)
        self.sample = np.random.default_rng(0).permutation(n)[: min(n, 5000)]

    def quality(self, emb):
        """Trustworthiness(10) and kNN preservation(10) of a training embedding."""
        x, y = self.train[self.sample], emb[self.sample]
        return trustworthiness(x, y, n_neighbors=10), knn_preservation(x, y)

    def accuracy(self, emb, z):
        """10-NN accuracy of the placed test images against the training embedding."""
        return KNeighborsClassifier(10).fit(emb, self.y_train).score(z, self.y_test)

    def ceiling(self):
        """The same classifier in the input space."""
        return self.accuracy(self.train, self.test)


def knn_preservation(x, y, k=10):
    a = NearestNeighbors(n_neighbors=k + 1).fit(x).kneighbors(x, return_distance=False)[:, 1:]
    b = NearestNeighbors(n_neighbors=k + 1).fit(y).kneighbors(y, return_distance=False)[:, 1:]
    return np.mean([len(set(r) & set(s)) / k for r, s in zip(a, b)])


def timed(f, repeat=1):
    """f's result and the median of `repeat` wall times."""
    ts, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return out, float(np.median(ts))


def in_process(model, test, emb, accuracy, t_ref, peer, repeat):
    """oose's two strategies on `test` through the Python package, the model loaded once
    (as the peers' transforms are timed): time (median of `repeat[strategy]` runs),
    10-NN accuracy against the training embedding `emb`, and the speed-up over the
    peer's transform time `t_ref`. Returns the estimator, or None (with a line saying
    so) when the package is not installed."""
    try:
        import oose
    except ImportError:
        print("(the oose Python package is not installed here: no in-process times)")
        return None
    est = oose.load(model)
    print(f"\nIn process (Python, the model loaded once), the {len(test)} test images:")
    for strategy in ("interpolation", "optimize"):
        est.set_params(strategy=strategy)
        z, t = timed(lambda: est.transform(test), repeat=repeat[strategy])
        print(f"oose {strategy} through Python: {t:.3f} s, accuracy {accuracy(emb, z):.4f}; "
              f"speed-up vs {peer}'s transform: {t_ref / t:.1f}×")
    return est


def one_point_ms(est, test, strategy, runs=201):
    """Median latency (ms) of `est.transform` on one row, over `runs` rows of `test`."""
    est.set_params(strategy=strategy)
    ts = []
    for i in range(runs):
        row = test[i % len(test) : i % len(test) + 1]
        t = time.perf_counter()
        est.transform(row)
        ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts))
