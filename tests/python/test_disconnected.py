"""Clustered data with the defaults (issue 23): a disconnected kNN graph is handled the
way scikit-learn users expect, with an oose.FitWarning naming the component sizes."""

import numpy as np
import pytest
from sklearn.cluster import SpectralClustering as SkSpectral
from sklearn.datasets import make_blobs
from sklearn.manifold import Isomap as SkIsomap
from sklearn.metrics import adjusted_rand_score

import oose

X, Y = make_blobs(
    n_samples=[100, 100, 100],
    centers=[[0, 0], [10, 10], [-10, 10]],
    cluster_std=0.5,
    random_state=0,
)


def test_spectral_clustering_labels_the_three_blobs_100_100_100():
    with pytest.warns(oose.FitWarning, match=r"3 connected components \(sizes \[100, 100, 100\]"):
        est = oose.SpectralClustering(n_clusters=3).fit(X)
    assert sorted(np.bincount(est.labels_)) == [100, 100, 100]
    assert adjusted_rand_score(Y, est.labels_) == 1.0
    sk = SkSpectral(n_clusters=3, random_state=0).fit(X)
    assert adjusted_rand_score(sk.labels_, est.labels_) == 1.0
    np.testing.assert_array_equal(est.predict(X + 0.01), est.labels_)
    one = oose.SpectralClustering(n_clusters=1).fit(X)
    assert (one.labels_ == 0).all() and (one.predict(X[:5]) == 0).all()


def test_isomap_joins_the_components_as_scikit_learn():
    with pytest.warns(oose.FitWarning, match="joined by an edge between its closest points"):
        est = oose.Isomap(n_neighbors=10).fit(X)
    sk = SkIsomap(n_neighbors=10).fit(X)
    np.testing.assert_allclose(est.eigenvalues_, sk.kernel_pca_.eigenvalues_, rtol=1e-12)
    a, b = est.embedding_, sk.embedding_
    b = b * np.sign((a * b).sum(0))
    assert np.abs(a - b).max() < 1e-10 * np.abs(a).max()
    # New points: the same as scikit-learn's transform.
    z = X[:20] + 0.1
    tb = sk.transform(z) * np.sign((a * sk.embedding_).sum(0))
    assert np.abs(est.transform(z) - tb).max() < 1e-9 * np.abs(a).max()


@pytest.mark.parametrize("cls", [oose.DiffusionMaps, oose.LaplacianEigenmaps])
def test_diffusion_methods_embed_the_components(cls):
    with pytest.warns(oose.FitWarning, match="eigenvalue 1 is repeated 3 times"):
        est = cls(n_components=3).fit(X)
    y = est.embedding_
    # Coordinates 1 and 2 are constant on each blob and distinct across blobs.
    means = np.array([y[Y == c, :2].mean(0) for c in range(3)])
    for c in range(3):
        assert np.abs(y[Y == c, :2] - means[c]).max() < 1e-10
    d = np.linalg.norm(means[:, None] - means[None], axis=2)
    assert d[np.triu_indices(3, 1)].min() > 0.5
    # A new point near a blob takes its coordinates.
    np.testing.assert_allclose(est.transform(X[:5] + 0.01)[:, :2], y[:5, :2], atol=1e-8)
