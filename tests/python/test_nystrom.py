"""KernelPCA through landmarks (maths §21): n_landmarks routes to the Nyström fit, which
with every point a landmark is kernel PCA; fit_chunks equals fit; the plan and sums
pickle; P-greedy landmarks beat random ones; refusals name the parameter."""

import pickle

import numpy as np
import pytest

import oose
from oose import _oose


def test_with_every_point_a_landmark_it_is_exact_kernel_pca():
    x = oose.datasets.swiss_roll(300, noise=0.05, random_state=0)
    kw = dict(n_components=3, kernel="laplacian", epsilon=3.0)
    exact = oose.KernelPCA(solver="dense", **kw).fit(x)
    ny = oose.KernelPCA(n_landmarks=300, landmarks="random", **kw).fit(x)
    assert ny.model_.method == "kpca-nystrom" and ny.info_["n_landmarks"] == 300
    np.testing.assert_allclose(ny.eigenvalues_, exact.eigenvalues_, rtol=1e-11)
    signs = np.sign((ny.embedding_ * exact.embedding_).sum(axis=0))
    gap = np.abs(ny.embedding_ * signs - exact.embedding_).max()
    assert gap <= 1e-9 * np.abs(exact.embedding_).max()


def test_fit_chunks_equals_fit_and_reads_lists_and_callables():
    x = oose.datasets.swiss_roll(4000, noise=0.05, random_state=1)
    kw = dict(n_components=2, n_landmarks=120, landmark_sample=1500)
    whole = oose.KernelPCA(**kw).fit(x)
    parts = [x[i : i + 333] for i in range(0, 4000, 333)]
    for chunks in (parts, lambda: iter(parts)):
        est = oose.KernelPCA(**kw).fit_chunks(chunks)
        assert est.embedding_.shape == (4000, 2)
        scale = np.abs(whole.embedding_).max()
        assert np.abs(est.embedding_ - whole.embedding_).max() <= 1e-12 * scale
        np.testing.assert_allclose(est.eigenvalues_, whole.eigenvalues_, rtol=1e-12)
    with pytest.raises(ValueError, match="read only once"):
        oose.KernelPCA(**kw).fit_chunks(iter(parts))
    with pytest.raises(ValueError, match="n_landmarks"):
        oose.KernelPCA().fit_chunks(parts)
    bad = [parts[0], parts[1][:, :2]]
    with pytest.raises(ValueError, match="2 columns, 3 in the first chunk"):
        oose.KernelPCA(**kw).fit_chunks(bad)


def test_plan_and_sums_pickle_and_reduce_in_any_order():
    x = oose.datasets.swiss_roll(3000, noise=0.05, random_state=2)
    params = {"n_components": 2, "n_landmarks": 80}
    rows = _oose.NystromPlan.sample_rows(params, 3000)
    sample = np.ascontiguousarray(x[rows])
    plan = pickle.loads(pickle.dumps(_oose.NystromPlan(params, sample, rows, 3000)))
    a = plan.empty_sums()
    for s in range(0, 3000, 1000):
        a.add(pickle.loads(pickle.dumps(plan.sums(np.ascontiguousarray(x[s : s + 1000])))))
    b = plan.sums(np.ascontiguousarray(x[2000:]))
    b2 = plan.sums(np.ascontiguousarray(x[:2000]))
    b2.add(b)
    assert a.n == b2.n == 3000
    fa = plan.finish(a, sample)
    ya = fa.model().extend(np.ascontiguousarray(x[:20]))[0]
    yb = plan.finish(b2, sample).model().extend(np.ascontiguousarray(x[:20]))[0]
    # The coordinates alone are the extension's, also after pickling the fit.
    back = pickle.loads(pickle.dumps(fa))
    np.testing.assert_array_equal(back.embed(np.ascontiguousarray(x[:20])), fa.embed(np.ascontiguousarray(x[:20])))
    assert np.abs(fa.embed(np.ascontiguousarray(x[:20])) - ya).max() <= 1e-13 * np.abs(ya).max()
    with pytest.raises(ValueError, match="coordinates only"):
        back.model()
    assert np.abs(ya - yb).max() <= 1e-12 * np.abs(ya).max()
    with pytest.raises(ValueError, match="Nyström sums"):
        plan.finish(plan.sums(np.ascontiguousarray(x[:10])), sample)
    with pytest.raises(ValueError, match="Nyström plan"):
        _oose.NystromPlan.from_bytes(plan.to_bytes()[:-3])


def _procrustes_error(a, b):
    u, _, vt = np.linalg.svd(a.T @ b)
    return np.linalg.norm(a @ (u @ vt) - b) / np.linalg.norm(b)


def test_p_greedy_landmarks_beat_random_ones():
    x = oose.datasets.swiss_roll(3000, noise=0.05, random_state=3)
    exact = oose.KernelPCA(n_components=4, solver="dense").fit(x)

    def err(choice, seed=0):
        est = oose.KernelPCA(n_components=4, n_landmarks=40, landmarks=choice, random_state=seed)
        return _procrustes_error(est.fit(x).embedding_, exact.embedding_)

    greedy = err("p-greedy")
    random = np.mean([err("random", s) for s in range(3)])
    assert greedy <= 0.5 * random, (greedy, random)


def test_refusals_and_loading():
    x = oose.datasets.swiss_roll(400, random_state=4)
    with pytest.raises(ValueError, match="solver"):
        oose.KernelPCA(n_landmarks=50, solver="dense").fit(x)
    with pytest.raises(ValueError, match="landmarks already"):
        oose.KernelPCA(n_landmarks=50, extension="low-rank").fit(x).transform(x[:3])
    with pytest.raises(ValueError, match="n_landmarks"):
        oose.KernelPCA(n_landmarks=0).fit(x)
    est = oose.KernelPCA(n_landmarks=50, random_state=7).fit(x)
    back = oose.from_bytes(est.to_bytes())
    loaded = oose.KernelPCA.from_bytes(est.to_bytes())
    assert loaded.get_params() == est.get_params()
    np.testing.assert_array_equal(loaded.transform(x[:5]), est.transform(x[:5]))
    assert isinstance(back, oose.KernelPCA) and back.n_landmarks == 50


def test_landmark_mds_takes_p_greedy():
    x = oose.datasets.swiss_roll(800, random_state=5)
    est = oose.LandmarkMDS(n_components=3, n_landmarks=25, landmarks="p-greedy").fit(x)
    assert est.info_["landmarks"] == "p-greedy" and est.info_["n_landmarks"] <= 25
    a = est.embedding_ - est.embedding_.mean(axis=0)
    b = x - x.mean(axis=0)
    assert _procrustes_error(a, b) < 1e-8
