"""t-SNE against scikit-learn: the same joint probabilities P on the same neighbours
(to 1e-10), an embedding of digits whose neighbourhoods are as good as scikit-learn's,
and a transform that is exact on training points, sample-wise and that classifies
held-out digits."""

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from sklearn.datasets import load_digits
from sklearn.manifold import TSNE as SkTSNE
from sklearn.manifold import trustworthiness
from sklearn.manifold._t_sne import _joint_probabilities_nn
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors

import oose
from oose import _oose


def _digits():
    d = load_digits()
    return d.data.astype(np.float64), d.target


def test_joint_probabilities_equal_scikit_learns_on_the_same_neighbours():
    x, _ = _digits()
    perplexity = 30.0
    k = int(3 * perplexity + 1)
    nn = NearestNeighbors(n_neighbors=k).fit(x)
    dist, idx = nn.kneighbors(None, n_neighbors=k)
    # scikit-learn squares the distances and computes in float32: give both the same.
    sq = (dist**2).astype(np.float32)
    n = x.shape[0]
    d_csr = csr_matrix(
        (sq.ravel().astype(np.float64), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n)
    )
    ref = _joint_probabilities_nn(d_csr, perplexity, 0).toarray()
    # scikit-learn sorts each row by column before the bisection; so do we here.
    order = np.argsort(idx, axis=1)
    idx_s = np.take_along_axis(idx, order, 1)
    sq_s = np.take_along_axis(sq, order, 1).astype(np.float64)
    indptr, cols, vals = _oose.tsne_joint_probabilities(idx_s.astype(np.int64), sq_s, perplexity)
    mine = csr_matrix((vals, cols, indptr), shape=(n, n)).toarray()
    assert np.abs(mine - ref).max() <= 1e-10 * ref.max()
    assert abs(mine.sum() - 1.0) < 1e-12


def test_digits_embedding_is_as_trustworthy_as_scikit_learns_and_transform_classifies():
    x, y = _digits()
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(x))
    train, test = perm[:1500], perm[1500:]
    est = oose.TSNE(random_state=0).fit(x[train])
    sk = SkTSNE(random_state=0, init="pca").fit(x[train])
    t_mine = trustworthiness(x[train], est.embedding_, n_neighbors=10)
    t_sk = trustworthiness(x[train], sk.embedding_, n_neighbors=10)
    assert t_mine >= t_sk - 0.01, (t_mine, t_sk)
    assert est.kl_divergence_ <= 1.02 * sk.kl_divergence_, (est.kl_divergence_, sk.kl_divergence_)
    # Transform: exact on training points, sample-wise, and held-out digits land among
    # their own class (kNN accuracy in the embedding close to the input-space ceiling).
    np.testing.assert_array_equal(est.transform(x[train[:50]]), est.embedding_[:50])
    z = est.transform(x[test])
    one_by_one = np.vstack([est.transform(x[test[i : i + 1]]) for i in range(20)])
    np.testing.assert_array_equal(one_by_one, z[:20])
    acc = KNeighborsClassifier(10).fit(est.embedding_, y[train]).score(z, y[test])
    ceiling = KNeighborsClassifier(10).fit(x[train], y[train]).score(x[test], y[test])
    assert acc >= ceiling - 0.01, (acc, ceiling)
    _, diag = est.transform(x[test], return_diagnostics=True)
    assert np.all((diag["residual"] >= 0) & (diag["residual"] <= 1))
    # optimize: openTSNE's transform, sample-wise; at least as accurate here.
    est.set_params(strategy="optimize")
    zo, diag = est.transform(x[test], return_diagnostics=True)
    assert np.all(np.isfinite(diag["kl"]))
    np.testing.assert_array_equal(
        np.vstack([est.transform(x[test[i : i + 1]]) for i in range(5)]), zo[:5]
    )
    acc_o = KNeighborsClassifier(10).fit(est.embedding_, y[train]).score(zo, y[test])
    assert acc_o >= ceiling - 0.01, (acc_o, ceiling)


def test_bad_parameters_are_named():
    x, _ = _digits()
    # Too large for the data: lowered to (N − 1)/3 with a warning (openTSNE's rule),
    # the model records the value used, get_params keeps the one asked for.
    with pytest.warns(oose.FitWarning, match=r"perplexity = 50.*lowered to \(N − 1\)/3 = 13"):
        est = oose.TSNE(perplexity=50, max_iter=250).fit(x[:40])
    assert dict(est.model_.params())["perplexity"] == 13.0 and est.get_params()["perplexity"] == 50
    with pytest.raises(ValueError, match="perplexity"):
        oose.TSNE(perplexity=-1.0).fit(x[:40])
    with pytest.raises(ValueError, match="n_components"):
        oose.TSNE(n_components=4).fit(x[:200])
    with pytest.raises(ValueError, match="angle"):
        oose.TSNE(angle=2.0).fit(x[:200])
    # A step that sends the points flying apart: the divergence is infinite (the
    # coordinates alone would look finite), an error naming what to lower.
    with pytest.raises(ValueError, match=r"diverged.*learning_rate = 1e200"):
        oose.TSNE(learning_rate=1e200, max_iter=100).fit(x[:40])


def test_fft_gradient_and_approximate_graph_from_python():
    x, y = _digits()
    x, y = x[:600], y[:600]
    with pytest.raises(ValueError, match="n_components"):
        oose.TSNE(n_components=3, method="fft").fit(x)
    exact = oose.TSNE(max_iter=400, method="exact").fit(x)
    fft = oose.TSNE(max_iter=400, method="fft", neighbors="approximate").fit(x)
    assert fft.info_["gradient_method"] == "fft"
    assert fft.info_["knn_graph"] == "approximate"
    assert 0.95 <= fft.knn_recall_ <= 1.0
    assert exact.knn_recall_ == 1.0
    # The same divergence within a few per cent (1000 steps of a non-convex descent
    # amplify a per-step difference of ~1 %), and clusters as tight.
    assert abs(fft.kl_divergence_ - exact.kl_divergence_) < 0.05 * exact.kl_divergence_
    acc = KNeighborsClassifier(10).fit(fft.embedding_, y).score(fft.embedding_, y)
    assert acc > 0.95
