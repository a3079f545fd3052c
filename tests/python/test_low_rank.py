"""Kernel PCA's certified low-rank extension through the Python package (maths §20):
`extension="low-rank"` within its bound of the exact coordinates, `auto` exact where
the bound is too large, the options' refusals, and the options settable at load."""

import numpy as np
import pytest

import oose


@pytest.fixture(scope="module")
def data():
    X = oose.datasets.swiss_roll(700, noise=0.05, random_state=0)
    return X[:500], X[500:]


def test_low_rank_within_its_bound_of_exact(data):
    X, Z = data
    exact = oose.KernelPCA(n_components=5).fit(X)
    fast = oose.KernelPCA(n_components=5, extension="low-rank").fit(X)
    Y, d = exact.transform(Z, return_diagnostics=True)
    Yl, dl = fast.transform(Z, return_diagnostics=True)
    assert "lowrank_bound" not in d
    dev = np.linalg.norm(Y - Yl, axis=1)
    assert np.all(dev <= dl["lowrank_bound"])
    assert dl["lowrank_bound"].max() < 1e-8 * np.abs(Y).max()
    assert exact.info_["residual_rank"] < 500
    # One row alone gives the same bits as in the batch.
    Y1, d1 = fast.transform(Z[7:8], return_diagnostics=True)
    assert np.array_equal(Y1[0], Yl[7]) and d1["lowrank_bound"][0] == dl["lowrank_bound"][7]


def test_auto_is_exact_where_the_bound_is_too_large(data):
    X, Z = data
    exact = oose.KernelPCA(n_components=3).fit(X).transform(Z)
    # A tolerance below every bound: every row exact, bound 0.
    strict = oose.KernelPCA(n_components=3, extension="auto", lowrank_tolerance=1e-30).fit(X)
    Ys, ds = strict.transform(Z, return_diagnostics=True)
    assert np.array_equal(Ys, exact) and np.all(ds["lowrank_bound"] == 0)
    # The default tolerance: every row through the pivots here.
    loose = oose.KernelPCA(n_components=3, extension="auto").fit(X)
    Ya, da = loose.transform(Z, return_diagnostics=True)
    assert np.all(da["lowrank_bound"] > 0)
    assert np.all(np.linalg.norm(Ya - exact, axis=1) <= da["lowrank_bound"])


def test_refusals_name_the_option(data):
    X, Z = data
    with pytest.raises(ValueError, match="lowrank_tolerance"):
        oose.KernelPCA(lowrank_tolerance=1e-8).fit(X).transform(Z)
    with pytest.raises(ValueError, match="extension"):
        oose.KernelPCA(extension="fast").fit(X).transform(Z)
    with pytest.raises(ValueError, match="extension"):
        oose.KernelPCA(extension="low-rank", strategy="restricted").fit(X).transform(Z)
    with pytest.raises(ValueError, match="extension"):
        oose.KernelPCA(kernel="polynomial", coef0=-1.0, extension="low-rank").fit(X).transform(Z)


def test_the_option_is_set_at_load(data, tmp_path):
    X, Z = data
    est = oose.KernelPCA(n_components=2).fit(X)
    path = tmp_path / "m.oose"
    est.save(path)
    back = oose.KernelPCA.load(path, extension="low-rank")
    assert back.get_params()["extension"] == "low-rank"
    _, d = back.transform(Z, return_diagnostics=True)
    assert "lowrank_bound" in d


def test_kernel_interpolation_through_the_pivots_is_within_its_bound():
    X = oose.datasets.swiss_roll(500, noise=0.05, random_state=0)
    y = np.sin(0.3 * X[:, 0]) + 0.1 * X[:, 2]
    Z = oose.datasets.swiss_roll(100, noise=0.05, random_state=1)
    kw = dict(epsilon=200.0, rank_tolerance=1e-8, regularization=1e-8)
    exact = oose.KernelInterpolator(**kw).fit(X, y)
    fast = oose.KernelInterpolator(extension="low-rank", **kw).fit(X, y)
    f, diag = fast.predict(Z, return_diagnostics=True)
    assert diag["lowrank_bound"].shape == (100,)
    dev = np.abs(exact.predict(Z) - f)
    assert np.all(dev <= diag["lowrank_bound"])
    # auto at a tolerance between the bounds: the rows above it are exact.
    cut = np.median(diag["lowrank_bound"]) / np.abs(y).max()
    auto = oose.KernelInterpolator(extension="auto", lowrank_tolerance=cut, **kw).fit(X, y)
    fa, da = auto.predict(Z, return_diagnostics=True)
    over = diag["lowrank_bound"] > cut * np.abs(y).max()
    assert over.any() and (~over).any()
    np.testing.assert_array_equal(fa[over], exact.predict(Z)[over])
    np.testing.assert_array_equal(fa[~over], f[~over])
    assert np.all(da["lowrank_bound"][over] == 0)
    with pytest.raises(ValueError, match="extension"):
        oose.KernelInterpolator(kernel="thin_plate", extension="low-rank").fit(X, y).predict(Z)


def test_dense_diffusion_maps_through_the_pivots_are_within_their_bound():
    X = oose.datasets.swiss_roll(500, noise=0.05, random_state=0)
    Z = oose.datasets.swiss_roll(100, noise=0.05, random_state=1)
    kw = dict(sparsity="dense", epsilon=40.0, rank_tolerance=1e-8)
    exact = oose.DiffusionMaps(**kw).fit(X)
    fast = oose.DiffusionMaps(extension="low-rank", **kw).fit(X)
    Y, diag = fast.transform(Z, return_diagnostics=True)
    dev = np.linalg.norm(exact.transform(Z) - Y, axis=1)
    assert np.all(np.isfinite(diag["lowrank_bound"]))
    assert np.all(dev <= diag["lowrank_bound"])
    np.testing.assert_array_equal(fast.transform(Z[5:6])[0], Y[5])
    with pytest.raises(ValueError, match="dense"):
        oose.DiffusionMaps(extension="low-rank").fit(X).transform(Z)
