"""Locally linear embedding agrees with scikit-learn's (method="standard" and "ltsa",
eigen_solver="dense") on a Swiss roll and on digits: embedding, transform and
reconstruction_error_."""
import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.manifold import LocallyLinearEmbedding as SkLLE

import oose


def digits_jittered():
    # Integer pixels give exact ties among neighbour distances (22 of the first 1000
    # rows tie at the k-th neighbour for k = 10), which the two libraries break
    # differently; a 1e-3 jitter makes the neighbour sets unique.
    x = load_digits().data.astype(float)
    return x + 1e-3 * np.random.default_rng(0).standard_normal(x.shape)


@pytest.mark.parametrize(
    "name,x,method,k",
    [
        ("swiss-roll", oose.datasets.swiss_roll(1200, noise=0.05, random_state=0), "standard", 12),
        ("digits", digits_jittered(), "standard", 12),
        ("swiss-roll", oose.datasets.swiss_roll(1200, noise=0.05, random_state=0), "ltsa", 10),
        # k = 10 and 12 leave two digits in no other point's neighbourhood: refused below.
        ("digits", digits_jittered(), "ltsa", 15),
    ],
)
def test_lle_equals_scikit_learn(name, x, method, k):
    train, new = x[:1000], x[1000:1200]
    sk = SkLLE(n_neighbors=k, n_components=2, eigen_solver="dense", method=method).fit(train)
    est = oose.LocallyLinearEmbedding(n_neighbors=k, method=method).fit(train)
    # Eigenvectors are defined up to sign: align each column with scikit-learn's.
    s = np.sign(np.sum(est.embedding_ * sk.embedding_, axis=0))
    np.testing.assert_allclose(est.embedding_ * s, sk.embedding_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(est.transform(new) * s, sk.transform(new), rtol=0, atol=1e-8)
    assert abs(est.reconstruction_error_ - sk.reconstruction_error_) <= 1e-8


def test_ltsa_refuses_points_no_neighbourhood_contains():
    """scikit-learn returns a degenerate embedding (M has extra null vectors, one per
    such point); oose names the points."""
    with pytest.raises(ValueError, match=r"n_neighbors.*327, 576"):
        oose.LocallyLinearEmbedding(n_neighbors=10, method="ltsa").fit(digits_jittered()[:1000])


def test_lle_reliability_separates_points_off_the_manifold():
    """The scale-free reconstruction error is small on the roll and large off it."""
    x = oose.datasets.swiss_roll(900, noise=0.0, random_state=2)
    est = oose.LocallyLinearEmbedding(n_neighbors=10).fit(x[:800])
    on = x[800:]
    off = on + np.array([0.0, 0.0, 3.0]) * np.random.default_rng(1).choice([-1, 1], (100, 1))
    _, d_on = est.transform(on, return_diagnostics=True)
    _, d_off = est.transform(off, return_diagnostics=True)
    assert np.all(np.isnan(d_on["residual"]))
    assert np.median(d_on["reconstruction_error"]) < 0.05
    assert np.median(d_off["reconstruction_error"]) > 10 * np.median(d_on["reconstruction_error"])
