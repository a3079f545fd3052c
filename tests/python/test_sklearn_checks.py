"""scikit-learn's estimator checks (current scikit-learn) on every oose estimator.

Each estimator runs with its defaults, and the graph methods also in the configurations
that suit the checks' tiny data sets (10 to 150 points; blobs, iris). Checks that cannot
apply are declared with the reason, per configuration, in expected_failures; every other
check must pass. The checks' well-separated blobs give disconnected neighbour graphs:
Isomap joins the components, the diffusion methods embed them (eigenvalue 1 repeated),
spectral clustering finds them as clusters. MVU runs with 15 neighbours, which join the
checks' two blobs of 15 points: its graph must be connected. The autoencoders embed
in one dimension: the checks' blobs have two features, and d must be below D.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import oose

RESTRICTED = (
    "restricted reconstruction (Trosset-Priebe) moves a point that sticks out of the "
    "d-dimensional representation space, training points included (maths §5): on the "
    "check's 3-D blobs with d=2, transform(X) differs from the training embedding that "
    "fit_transform returns, by design. The projection configurations pass this check."
)
IRIS_APART = (
    "iris's setosa class lies apart from the other two: the 15-nearest-neighbour graph "
    "has two components, and MVU refuses it by name (its variance would be unbounded)."
)
REPEATED = (
    "iris has repeated points: exact interpolation through them is a singular system "
    "(the error names the repeated rows); regularization > 0 fits it."
)

ESTIMATORS = [
    oose.Isomap(),
    oose.DiffusionMaps(),
    oose.LaplacianEigenmaps(),
    oose.SpectralClustering(),
    oose.KernelPCA(),
    oose.KernelPCA(kernel="laplacian", centering=False),
    oose.KernelPCA(kernel="linear", strategy="restricted"),
    oose.KernelPCA(n_landmarks=30),
    oose.KernelPCA(n_landmarks=20, landmarks="random", centering=False),
    oose.ClassicalMDS(),
    oose.ClassicalMDS(strategy="restricted"),
    oose.LandmarkMDS(),
    oose.LandmarkMDS(n_landmarks=20, landmarks="p-greedy"),
    oose.Isomap(n_neighbors=5, largest_component=True),
    oose.Isomap(n_neighbors=5),
    oose.DiffusionMaps(sparsity="dense"),
    oose.DiffusionMaps(sparsity="threshold", threshold=1e-3, alpha=0.5),
    oose.DiffusionMaps(n_neighbors=5),
    oose.LaplacianEigenmaps(sparsity="dense"),
    oose.LaplacianEigenmaps(n_neighbors=5),
    oose.SpectralClustering(sparsity="dense"),
    oose.SpectralClustering(n_neighbors=5),
    oose.KernelInterpolator(),
    oose.KernelInterpolator(kernel="thin_plate"),
    oose.LocallyLinearEmbedding(),
    oose.TSNE(perplexity=5.0, max_iter=250),
    oose.UMAP(n_neighbors=5, n_epochs=50),
    oose.TSNE(),
    oose.UMAP(),
    oose.MaximumVarianceUnfolding(n_neighbors=15),
    oose.Autoencoder(n_components=1, layers=(8,), epochs=5),
    oose.VariationalAutoencoder(n_components=1, layers=(8,), epochs=5),
]


def expected_failures(est):
    # (The kNN methods lower an n_neighbors or perplexity too large for the checks'
    # 10 or 20 points, with a FitWarning, as umap-learn and openTSNE do.)
    out = {}
    if getattr(est, "strategy", "projection") == "restricted":
        out.update(
            {c: RESTRICTED for c in ["check_transformer_general", "check_transformer_data_not_an_array"]}
        )
    if isinstance(est, oose.KernelInterpolator) and est.kernel == "thin_plate":
        out["check_positive_only_tag_during_fit"] = REPEATED
    if isinstance(est, oose.MaximumVarianceUnfolding):
        out["check_positive_only_tag_during_fit"] = IRIS_APART
    return out


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "est, k",
    [
        (oose.Isomap(), 10),
        (oose.DiffusionMaps(), 25),
        (oose.LaplacianEigenmaps(), 10),
        (oose.SpectralClustering(), 10),
        (oose.LocallyLinearEmbedding(n_neighbors=12), 12),
    ],
    ids=lambda e: type(e).__name__ if not isinstance(e, int) else str(e),
)
def test_defaults_lower_n_neighbors_on_too_few_points_with_a_warning(est, k):
    """The defaults' n_neighbors (10 or 25) on 8 points: lowered to N - 1 = 7 with a
    FitWarning naming the parameter (umap-learn's rule), the same fit as asking for 7;
    get_params keeps the value asked for; 0 is still refused by name."""
    import numpy as np
    from sklearn.base import clone

    x = np.random.default_rng(0).normal(size=(8, 3))
    with pytest.warns(oose.FitWarning, match=rf"n_neighbors = {k} is not below the number of points \(8\): lowered to N − 1 = 7"):
        got = clone(est).fit(x)
    assert got.get_params()["n_neighbors"] == k
    seven = clone(est).set_params(n_neighbors=7).fit(x)
    if isinstance(est, oose.SpectralClustering):
        np.testing.assert_array_equal(got.labels_, seven.labels_)
    else:
        np.testing.assert_array_equal(got.embedding_, seven.embedding_)
    with pytest.raises(ValueError, match="n_neighbors"):
        clone(est).set_params(n_neighbors=0).fit(x)
