"""``metric`` (maths §19) on the neighbour estimators: kept by get_params, save/load
and the model; scale-free for cosine (bit for bit under powers of two); useful where
rows differ by an overall scale (digits at random brightness); bad values named."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.neighbors import KNeighborsClassifier

import oose

NEIGHBOUR_ESTIMATORS = [
    oose.Isomap,
    oose.DiffusionMaps,
    oose.LaplacianEigenmaps,
    oose.SpectralClustering,
    oose.LocallyLinearEmbedding,
    oose.TSNE,
    oose.UMAP,
]


@pytest.fixture(scope="module")
def digits():
    d = load_digits()
    return d.data.astype(np.float64), d.target


def test_every_neighbour_estimator_takes_metric_and_no_other():
    for cls in NEIGHBOUR_ESTIMATORS:
        assert cls().get_params()["metric"] == "euclidean", cls.__name__
    for cls in (oose.KernelPCA, oose.ClassicalMDS, oose.LandmarkMDS, oose.KernelInterpolator):
        assert "metric" not in cls().get_params(), cls.__name__
    X = oose.datasets.s_curve(60, random_state=0)
    with pytest.raises(ValueError, match="metric.*taken by isomap"):
        oose._oose.fit("kpca", X, {"metric": "cosine"})


def test_metric_is_kept_by_the_model_and_its_file(digits):
    X, _ = digits
    est = oose.UMAP(metric="cosine", n_epochs=30, random_state=0).fit(X[:300])
    assert est.info_["metric"] == "cosine"
    assert dict(est.model_.params())["metric"] == "cosine"
    back = oose.from_bytes(est.to_bytes())
    assert back.get_params() == est.get_params()
    np.testing.assert_array_equal(back.transform(X[300:340]), est.transform(X[300:340]))


def test_cosine_is_scale_free(digits):
    X, _ = digits
    rng = np.random.default_rng(0)
    powers = 2.0 ** rng.integers(-3, 4, size=len(X))
    train, new = slice(0, 400), slice(400, 460)
    a = oose.Isomap(metric="cosine").fit(X[train])
    b = oose.Isomap(metric="cosine").fit(X[train] * powers[train, None])
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    np.testing.assert_array_equal(a.transform(X[new]), b.transform(X[new] * powers[new, None]))
    # Any other scale: the same up to round-off.
    c = X[new] * rng.uniform(0.1, 10.0, size=(60, 1))
    np.testing.assert_allclose(a.transform(c), a.transform(X[new]), atol=1e-9)


def test_cosine_recovers_classes_when_rows_have_random_scales(digits):
    """Digits at random brightness (each image times U(0.2, 5)): the Euclidean
    neighbours are mostly images of the same brightness, the cosine ones of the same
    digit. Label accuracy of held-out images by their 5 nearest training images in the
    UMAP embedding."""
    X, y = digits
    rng = np.random.default_rng(1)
    Xs = X * rng.uniform(0.2, 5.0, size=(len(X), 1))
    order = rng.permutation(len(X))
    train, test = order[:1400], order[1400:]
    acc = {}
    for metric in ("euclidean", "cosine", "correlation"):
        est = oose.UMAP(metric=metric, random_state=0).fit(Xs[train])
        knn = KNeighborsClassifier(5).fit(est.embedding_, y[train])
        acc[metric] = knn.score(est.transform(Xs[test]), y[test])
    print(acc)
    assert acc["cosine"] >= 0.9 and acc["correlation"] >= 0.9, acc
    assert acc["cosine"] >= acc["euclidean"] + 0.05, acc


def test_bad_metric_and_rows_without_direction_are_named():
    X = oose.datasets.s_curve(80, random_state=0) + 3.0
    with pytest.raises(ValueError, match="metric.*euclidean, cosine, correlation"):
        oose.Isomap(metric="manhattan").fit(X)
    Z = X.copy()
    Z[3] = 0.0
    with pytest.raises(ValueError, match="row 3"):
        oose.Isomap(metric="cosine").fit(Z)
    est = oose.Isomap(metric="correlation").fit(X)
    with pytest.raises(ValueError, match="constant row"):
        est.transform(np.full((2, 3), 7.0))
