"""inverse_transform on every embedding that keeps its training points (maths §8,
§13): training embedding points map back to their training points exactly, held-out
points come back close (compared with scikit-learn's KernelPCA pre-image), pipelines
invert, and the estimators without training points do not offer it."""

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import oose

ESTIMATORS = [
    oose.KernelPCA(n_components=2),
    oose.ClassicalMDS(n_components=2),
    oose.Isomap(n_components=2),
    oose.DiffusionMaps(n_components=2),
    oose.LaplacianEigenmaps(n_components=2),
    oose.LocallyLinearEmbedding(n_components=2),
    oose.TSNE(perplexity=10.0, max_iter=300),
    oose.UMAP(n_epochs=50),
]


@pytest.fixture(scope="module")
def roll():
    X = oose.datasets.swiss_roll(700, random_state=3)
    return X[:600], X[600:]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_training_embedding_maps_back_exactly(est, roll):
    train, _ = roll
    est = est.fit(train)
    back, diag = est.inverse_transform(est.embedding_[:50], return_diagnostics=True)
    np.testing.assert_array_equal(back, train[:50])
    assert (diag["residual"] == 0).all()
    # Rows are independent of the batch.
    mid = 0.5 * (est.embedding_[:6] + est.embedding_[10:16])
    np.testing.assert_array_equal(est.inverse_transform(mid)[2:3], est.inverse_transform(mid[2:3]))


def test_isomap_round_trip_of_held_out_points_is_close(roll):
    train, new = roll
    est = oose.Isomap(n_components=2).fit(train)
    back = est.inverse_transform(est.transform(new))
    err = np.linalg.norm(back - new, axis=1)
    spacing = np.median(np.sort(np.linalg.norm(train[:, None] - train[None], axis=2), axis=1)[:, 1])
    print(f"Isomap round trip: median error {np.median(err):.3f}, neighbour spacing {spacing:.3f}")
    assert np.median(err) < 2 * spacing


@pytest.mark.parametrize("d", [2, 5])
def test_kernel_pca_pre_image_against_scikit_learn(roll, d):
    """Held-out points through a Gaussian kernel PCA and back: oose's local
    interpolation against scikit-learn's kernel ridge pre-image (fit_inverse_transform,
    its default alpha), at the same kernel (maths §8's table: with 5 components the
    embedding is one-to-one and the local pre-image 13 times closer; with 2 it folds
    the roll, and the weight bound keeps it below scikit-learn's error)."""
    train, new = roll
    ours = oose.KernelPCA(n_components=d, epsilon=50.0).fit(train)
    theirs = SkKernelPCA(d, kernel="rbf", gamma=1 / 50.0, fit_inverse_transform=True).fit(train)
    e_ours = np.linalg.norm(ours.inverse_transform(ours.transform(new)) - new, axis=1).mean()
    e_theirs = np.linalg.norm(theirs.inverse_transform(theirs.transform(new)) - new, axis=1).mean()
    print(f"kernel PCA pre-image error, d={d}: oose {e_ours:.3f}, scikit-learn {e_theirs:.3f}")
    assert e_ours <= (0.1 if d == 5 else 1.0) * e_theirs


def test_pipeline_inverts_and_missing_pre_images_are_absent_or_named(roll):
    train, _ = roll
    pipe = make_pipeline(StandardScaler(), oose.Isomap()).fit(train)
    np.testing.assert_allclose(pipe.inverse_transform(pipe.transform(train[:5])), train[:5], atol=1e-12)
    assert not hasattr(oose.LandmarkMDS(), "inverse_transform")
    assert not hasattr(oose.SpectralClustering(), "inverse_transform")
    D = np.linalg.norm(train[:100, None] - train[None, :100], axis=2)
    mds = oose.ClassicalMDS(input="dissimilarities").fit(D)
    with pytest.raises(ValueError, match="inverse transform.*keeps none"):
        mds.inverse_transform(mds.embedding_[:2])
    iso = oose.Isomap(largest_component=True).fit(train)
    with pytest.raises(ValueError, match="embedding_|n_components|columns"):
        iso.inverse_transform(np.zeros((1, 5)))
