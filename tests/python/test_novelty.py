"""The novelty columns through the Python estimators (maths §18): keys and types, the
level alpha, the calibration attribute, sample-wise rows, and a held-out digit class
found on scikit-learn's digits."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.metrics import roc_auc_score

import oose


@pytest.fixture(scope="module")
def split():
    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float64)
    rng = np.random.default_rng(0)
    known = np.flatnonzero(y != 9)
    rng.shuffle(known)
    train, test = known[300:], known[:300]
    novel = np.flatnonzero(y == 9)
    return x[train], x[test], x[novel]


@pytest.mark.parametrize(
    "est",
    [oose.KernelPCA(n_components=5), oose.DiffusionMaps(n_components=5), oose.Isomap(n_neighbors=10)],
    ids=lambda e: type(e).__name__,
)
def test_held_out_class_is_ranked_above_known_digits(split, est):
    train, test, novel = split
    est.fit(train)
    cal = est.novelty_calibration_
    assert cal.shape == (len(train),) and np.all(np.diff(cal) >= 0)
    _, dk = est.transform(test, return_diagnostics=True)
    _, dn = est.transform(novel, return_diagnostics=True)
    assert dk["is_novel"].dtype == np.bool_
    score = np.r_[dn["novelty"], dk["novelty"]]
    label = np.r_[np.ones(len(novel)), np.zeros(len(test))]
    # Measured 0.977 (the mean distance to 15 neighbours: 0.955; LOF: 0.927).
    assert roc_auc_score(label, score) > 0.96
    # p-values in (0, 1]; the flag is p <= alpha.
    for d in (dk, dn):
        assert np.all((d["novelty_pvalue"] > 0) & (d["novelty_pvalue"] <= 1))
        np.testing.assert_array_equal(d["is_novel"], d["novelty_pvalue"] <= 0.01)
    _, loose = est.transform(test, return_diagnostics=True, alpha=0.2)
    np.testing.assert_array_equal(loose["is_novel"], loose["novelty_pvalue"] <= 0.2)
    assert loose["is_novel"].sum() >= dk["is_novel"].sum()
    # False alarms on known digits at alpha = 0.2: near 0.2.
    assert 0.1 <= loose["is_novel"].mean() <= 0.3


def test_rows_do_not_depend_on_the_batch_and_survive_save_load(split, tmp_path):
    train, test, novel = split
    est = oose.KernelPCA(n_components=4).fit(train)
    q = np.vstack([test[:20], novel[:20]])
    _, batch = est.transform(q, return_diagnostics=True)
    for i in (0, 7, 25, 39):
        _, one = est.transform(q[i : i + 1], return_diagnostics=True)
        for k in ("novelty", "novelty_pvalue", "is_novel"):
            assert one[k][0] == batch[k][i]
    est.save(tmp_path / "m.oose")
    back = oose.KernelPCA.load(tmp_path / "m.oose")
    _, again = back.transform(q, return_diagnostics=True)
    for k in ("novelty", "novelty_pvalue", "is_novel"):
        np.testing.assert_array_equal(again[k], batch[k])


def test_alpha_outside_the_unit_interval_is_refused(split):
    train, test, _ = split
    est = oose.KernelPCA(n_components=2).fit(train)
    with pytest.raises(ValueError, match="alpha"):
        est.transform(test, alpha=1.0)


def test_a_level_too_few_training_points_cannot_reach_is_a_novelty_warning(split):
    # 80 training points: the smallest p-value is 1/81 > 0.01, so a row far from them
    # all is not flagged at the default level; the warning names the level that is.
    import warnings

    train, _, _ = split
    far = np.full((1, train.shape[1]), 1e3)
    est = oose.Isomap(n_neighbors=10).fit(train[:80])
    assert est.info_["novelty_smallest_pvalue"] == pytest.approx(1 / 81)
    with pytest.warns(oose.NoveltyWarning, match=r"alpha = 0\.01: with 80 training points.*1/81 = 0\.0123"):
        _, d = est.transform(far, return_diagnostics=True)
    assert d["novelty_pvalue"][0] == 1 / 81 and not d["is_novel"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.transform(far)  # no diagnostics asked: nothing to warn about
        _, d = est.transform(far, return_diagnostics=True, alpha=0.02)
        assert d["is_novel"][0]
        oose.Isomap(n_neighbors=10).fit(train[:99]).transform(far, return_diagnostics=True)
    # The clustering's predict with diagnostics warns too.
    sc = oose.SpectralClustering(n_clusters=2).fit(train[:80])
    with pytest.warns(oose.NoveltyWarning):
        sc.predict(train[80:82], return_diagnostics=True)


def _warned_here(category, call):
    """The warnings of ``category`` that ``call()`` gives, each with the file it is
    attributed to."""
    import warnings

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call()
    return [(str(m.message)[:40], m.filename) for m in w if issubclass(m.category, category)]


def test_warnings_point_at_the_callers_line(split):
    # A warning is attributed to the line of the user's code that called oose, not to
    # oose's own frames or scikit-learn's output wrapper around transform, whatever
    # the path (transform, predict, fit, fit_transform, a pipeline).
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train, _, _ = split
    small = train[:40]
    far = np.full((1, train.shape[1]), 1e3)
    iso = oose.Isomap(n_neighbors=10).fit(small)
    sc = oose.SpectralClustering(n_clusters=2).fit(small)
    cases = {
        "transform": (oose.NoveltyWarning, lambda: iso.transform(far, return_diagnostics=True)),
        "predict": (oose.NoveltyWarning, lambda: sc.predict(train[40:42], return_diagnostics=True)),
        "fit": (oose.FitWarning, lambda: oose.Isomap(n_neighbors=60).fit(small)),
        "fit_transform": (oose.FitWarning, lambda: oose.UMAP(n_neighbors=60, n_epochs=20).fit_transform(small)),
        "tsne fit": (oose.FitWarning, lambda: oose.TSNE(perplexity=50, max_iter=250).fit(small)),
        "pipeline": (
            oose.FitWarning,
            lambda: make_pipeline(StandardScaler(), oose.Isomap(n_neighbors=60)).fit(small),
        ),
    }
    for name, (category, call) in cases.items():
        got = _warned_here(category, call)
        assert got, name
        assert all(f == __file__ for _, f in got), (name, got)
