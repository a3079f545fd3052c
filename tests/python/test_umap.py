"""UMAP from Python: digits embedded with neighbourhoods kept, a transform that is exact
on training points, sample-wise and that classifies held-out digits with both
strategies, an inverse transform that returns the training points, and bad parameters
named. (umap-learn itself is compared in benches/run_umap.sh: its numba compilation
would cost this suite minutes.)"""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.manifold import trustworthiness
from sklearn.neighbors import KNeighborsClassifier

import oose


def _digits():
    d = load_digits()
    return d.data.astype(np.float64), d.target


@pytest.fixture(scope="module")
def fitted():
    x, y = _digits()
    perm = np.random.default_rng(0).permutation(len(x))
    train, test = perm[:1500], perm[1500:]
    est = oose.UMAP(random_state=0).fit(x[train])
    return est, x, y, train, test


def test_digits_embedding_keeps_neighbourhoods_and_umap_learns_curve(fitted):
    est, x, _, train, _ = fitted
    # umap-learn 0.5.12 on the same 1500 digits (random_state=0), measured once in
    # benches' environment (not a dependency of this suite): trustworthiness(10) 0.9854,
    # held-out 10-NN accuracy of its transform 0.9764 (oose: 0.9878, 0.9865).
    assert trustworthiness(x[train], est.embedding_, n_neighbors=10) >= 0.9854 - 0.01
    assert abs(est.a_ - 1.5769434) < 1e-4 and abs(est.b_ - 0.8950608) < 1e-4
    assert est.n_epochs_ == 500
    assert est.knn_recall_ == 1.0
    assert est.info_["init_used"].startswith("spectral")


@pytest.mark.parametrize("strategy", ["interpolation", "optimize"])
def test_transform_is_sample_wise_and_classifies_held_out_digits(fitted, strategy):
    est, x, y, train, test = fitted
    est.set_params(strategy=strategy)
    before = est.model_.to_bytes()
    try:
        z, diag = est.transform(x[test], return_diagnostics=True)
        # The model is never modified by a transform (umap-learn's once was).
        assert est.model_.to_bytes() == before
        one_by_one = np.vstack([est.transform(x[test[i : i + 1]]) for i in range(10)])
        np.testing.assert_array_equal(one_by_one, z[:10])
        np.testing.assert_array_equal(est.transform(x[test][::-1])[::-1], z)
        acc = KNeighborsClassifier(10).fit(est.embedding_, y[train]).score(z, y[test])
        ceiling = KNeighborsClassifier(10).fit(x[train], y[train]).score(x[test], y[test])
        assert acc >= 0.9764 - 0.01 and acc >= ceiling - 0.02, (acc, ceiling)
        assert np.all(np.isfinite(diag["novelty"]))
        if strategy == "interpolation":
            np.testing.assert_allclose(est.transform(x[train[:50]]), est.embedding_[:50],
                                       rtol=0, atol=1e-10)
            assert np.all((diag["residual"] >= 0) & (diag["residual"] <= 1))
    finally:
        est.set_params(strategy="interpolation")


def test_inverse_transform_returns_training_points_and_flags_far_coordinates(fitted):
    est, x, _, train, _ = fitted
    back, diag = est.inverse_transform(est.embedding_[:20], return_diagnostics=True)
    np.testing.assert_allclose(back, x[train[:20]], rtol=0, atol=1e-8)
    assert np.all(np.abs(diag["residual"]) < 1e-8)
    far = est.embedding_.max(axis=0) + 50.0
    _, diag = est.inverse_transform(far[None, :], return_diagnostics=True)
    assert diag["residual"][0] > 0.99
    with pytest.raises(ValueError, match="embedded points"):
        est.inverse_transform(np.zeros((1, 3)))


def test_save_load_and_pickle_keep_the_model(fitted, tmp_path):
    est, x, _, _, test = fitted
    est.save(tmp_path / "u.oose")
    for other in (oose.load(tmp_path / "u.oose"), pickle.loads(pickle.dumps(est))):
        assert isinstance(other, oose.UMAP)
        np.testing.assert_array_equal(other.transform(x[test[:5]]), est.transform(x[test[:5]]))
        np.testing.assert_array_equal(other.inverse_transform(est.embedding_[:3]),
                                      est.inverse_transform(est.embedding_[:3]))


def test_bad_parameters_are_named():
    x, _ = _digits()
    # Too large for the data: lowered to N − 1 with a warning (umap-learn's rule).
    with pytest.warns(oose.FitWarning, match="n_neighbors = 40 .*lowered to N − 1 = 39"):
        est = oose.UMAP(n_neighbors=40, n_epochs=30).fit(x[:40])
    assert dict(est.model_.params())["n_neighbors"] == 39 and est.get_params()["n_neighbors"] == 40
    with pytest.raises(ValueError, match="n_neighbors"):
        oose.UMAP(n_neighbors=1).fit(x[:40])
    with pytest.raises(ValueError, match="min_dist"):
        oose.UMAP(min_dist=2.0).fit(x[:100])
    with pytest.raises(ValueError, match="init"):
        oose.UMAP(init="pca").fit(x[:100])
    with pytest.raises(ValueError, match="strategy"):
        oose.UMAP(strategy="restricted", n_epochs=20).fit(x[:100]).transform(x[:2])
    # Constant data: nothing to embed, said so; duplicates: finite.
    with pytest.raises(ValueError, match="coincide"):
        oose.UMAP(n_neighbors=5).fit(np.ones((30, 4)))
    dup = np.repeat(x[:50], 3, axis=0)
    emb = oose.UMAP(n_neighbors=5, n_epochs=50).fit_transform(dup)
    assert np.all(np.isfinite(emb))
