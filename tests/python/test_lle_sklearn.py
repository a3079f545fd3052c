"""Locally linear embedding agrees with scikit-learn's (method="standard", "modified"
and "ltsa", eigen_solver="dense") on a Swiss roll and on digits: embedding, transform
and reconstruction_error_. method="hessian" agrees with Donoho and Grimes' Hessian
eigenmaps written here from the paper (scikit-learn's "hessian" is its LTSA)."""
import warnings

import numpy as np
import pytest
import scipy.linalg
from sklearn.datasets import load_digits
from sklearn.manifold import LocallyLinearEmbedding as SkLLE
from sklearn.neighbors import NearestNeighbors

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
        ("swiss-roll", oose.datasets.swiss_roll(1200, noise=0.05, random_state=0), "modified", 10),
        ("digits", digits_jittered(), "modified", 12),
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


def test_groups_the_neighbour_graph_cannot_tie_are_refused_or_warned():
    """On 400 digits with 5 neighbours the graph followed from each point to its
    neighbours has 5 closed groups: M has a null vector for each, and scikit-learn's
    embedding is four of them in a rotation its eigensolver picks (the same data with
    the columns in another order gives subspaces up to 90° apart). oose refuses it by
    name; two groups (k = 8) give one such vector, determined up to sign, and a fit
    warning; the embedding is then the same for any column order, as at k = 10."""
    x = digits_jittered()[:400]
    with pytest.raises(
        ValueError,
        match=r"n_neighbors.*5 closed groups.*sizes \[40, 38, 35, 22, 7\].*"
        r"here n_neighbors = 8 is the smallest that fits",
    ):
        oose.LocallyLinearEmbedding(n_neighbors=5, n_components=3).fit(x)
    with pytest.raises(ValueError, match=r"n_neighbors.*3 connected components"):
        oose.LocallyLinearEmbedding(n_neighbors=5, method="modified").fit(x)
    # The advice holds: LTSA refused at 10 names 11, and 11 fits.
    with pytest.raises(ValueError, match=r"n_neighbors = 11 is the smallest that fits"):
        oose.LocallyLinearEmbedding(n_neighbors=10, method="ltsa").fit(x)
    oose.LocallyLinearEmbedding(n_neighbors=11, method="ltsa").fit(x)
    cols = np.random.default_rng(1).permutation(x.shape[1])
    for k, warned in [(8, True), (10, False)]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = oose.LocallyLinearEmbedding(n_neighbors=k).fit(x).embedding_
            b = oose.LocallyLinearEmbedding(n_neighbors=k).fit(x[:, cols]).embedding_
        notes = [str(m.message) for m in w if issubclass(m.category, oose.FitWarning)]
        assert bool(notes) == warned and all("2 closed groups" in n for n in notes), notes
        assert np.degrees(scipy.linalg.subspace_angles(a, b)).max() < 1e-4


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


def hessian_eigenmaps(x, k, d=2):
    """Donoho & Grimes (2003), dense: per point the top d left singular vectors U of the
    centred neighbourhood, Y = [1, U, UₐU_b (a ≤ b)], Q from its QR, the d(d+1)/2
    Hessian columns after the first d + 1; M = Σ H Hᵀ; its eigenvectors 1..d."""
    n = len(x)
    nb = NearestNeighbors(n_neighbors=k + 1).fit(x).kneighbors(x, return_distance=False)[:, 1:]
    dp = d * (d + 1) // 2
    m = np.zeros((n, n))
    for i in range(n):
        g = x[nb[i]] - x[nb[i]].mean(0)
        u = np.linalg.svd(g, full_matrices=False)[0][:, :d]
        prods = [u[:, a] * u[:, b] for a in range(d) for b in range(a, d)]
        q = np.linalg.qr(np.column_stack([np.ones(k), u] + prods))[0]
        h = q[:, d + 1 : d + 1 + dp]
        m[np.ix_(nb[i], nb[i])] += h @ h.T
    values, vectors = scipy.linalg.eigh(m, subset_by_index=(0, d + 1))
    return vectors, values


@pytest.mark.parametrize(
    "name,x,k",
    [
        ("swiss-roll", oose.datasets.swiss_roll(1200, noise=0.05, random_state=0), 12),
        ("digits", digits_jittered(), 20),
    ],
)
def test_hessian_equals_donoho_grimes(name, x, k):
    train, new = x[:1000], x[1000:1200]
    vectors, values = hessian_eigenmaps(train, k)
    ref = vectors[:, 1:3]
    est = oose.LocallyLinearEmbedding(n_neighbors=k, method="hessian").fit(train)
    # scikit-learn's transform applied to the reference embedding: the same barycentric
    # weights from the same neighbours.
    sk = SkLLE(n_neighbors=k, method="standard", eigen_solver="dense").fit(train)
    s = np.sign(np.sum(est.embedding_ * ref, axis=0))
    np.testing.assert_allclose(est.embedding_ * s, ref, rtol=0, atol=1e-8)
    sk.embedding_ = ref
    np.testing.assert_allclose(est.transform(new) * s, sk.transform(new), rtol=0, atol=1e-8)
    assert abs(est.reconstruction_error_ - values[1:3].sum()) <= 1e-8


def test_hessian_refuses_points_no_neighbourhood_contains():
    """At k = 12 on the first 1000 digits, points 327 and 576 are in no other point's
    neighbourhood: their rows of M are zero, so their unit vectors are null vectors of
    M, and the paper's embedding (d = 2) is those two. oose refuses it by name."""
    train = digits_jittered()[:1000]
    vectors, values = hessian_eigenmaps(train, 12)
    null = vectors[:, values < 1e-12]
    assert null.shape[1] == 3
    for i in (327, 576):
        assert np.linalg.norm(null[i]) == pytest.approx(1.0, abs=1e-10)
    with pytest.raises(ValueError, match=r"n_neighbors.*Hessian LLE.*327, 576"):
        oose.LocallyLinearEmbedding(n_neighbors=12, method="hessian").fit(train)


def test_scikit_learns_hessian_is_its_ltsa():
    """Why oose's "hessian" does not follow scikit-learn's: scikit-learn keeps every
    column of the full local Q after the first d + 1, so Σ w wᵀ = I − G Gᵀ, LTSA's M."""
    x = oose.datasets.swiss_roll(600, noise=0.05, random_state=3)
    fit = lambda m: SkLLE(n_neighbors=12, method=m, eigen_solver="dense").fit(x)
    h, l = fit("hessian"), fit("ltsa")
    sign = np.sign(np.sum(h.embedding_ * l.embedding_, axis=0))
    np.testing.assert_allclose(h.embedding_ * sign, l.embedding_, rtol=0, atol=1e-9)
    assert abs(h.reconstruction_error_ - l.reconstruction_error_) <= 1e-12
    # Donoho and Grimes' M is another matrix: here its bottom eigenvalues sum to 0.72×
    # LTSA's (0.000292 vs 0.000403).
    ours = oose.LocallyLinearEmbedding(n_neighbors=12, method="hessian").fit(x)
    assert ours.reconstruction_error_ < 0.8 * l.reconstruction_error_
