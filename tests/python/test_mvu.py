"""Maximum variance unfolding from Python (maths §15): the fitted attributes, the
solver's status, ``transform`` and its refusals."""

import numpy as np
import pytest

import oose


def test_fit_unrolls_a_roll_and_reports_the_solve():
    X = oose.datasets.swiss_roll(150, random_state=0)
    est = oose.MaximumVarianceUnfolding(n_neighbors=5).fit(X[:120])
    assert est.embedding_.shape == (120, 2)
    assert est.sdp_status_ in ("solved", "almost-solved")
    assert est.max_constraint_violation_ < 1e-5
    s = est.kernel_spectrum_
    assert (s[0] + s[1]) / est.objective_ > 0.95
    # Columns of the embedding: centred, squared norms = K's top eigenvalues.
    np.testing.assert_allclose(est.embedding_.mean(axis=0), 0.0, atol=1e-8 * np.sqrt(s[0]))
    np.testing.assert_allclose((est.embedding_**2).sum(axis=0), s[:2], rtol=1e-8)
    Y, diag = est.transform(X[120:], return_diagnostics=True)
    assert Y.shape == (30, 2)
    assert np.all(np.isfinite(diag["reconstruction_error"]))
    # Row by row the same as in the batch.
    np.testing.assert_array_equal(est.transform(X[127:128])[0], Y[7])


def test_unsolved_and_disconnected_raise_with_the_reason():
    X = oose.datasets.swiss_roll(60, random_state=0)
    with pytest.raises(ValueError, match="max-iterations"):
        oose.MaximumVarianceUnfolding(max_iter=3).fit(X)
    two = np.vstack([X, X + 1000.0])
    with pytest.raises(ValueError, match="disconnected"):
        oose.MaximumVarianceUnfolding(n_neighbors=3).fit(two)


def test_a_stalled_solve_names_the_tolerance_that_accepts_it():
    # The 200-point S-curve with k = 5 stalls near 1e-6 (nearly dependent edges, maths
    # §15): the error says more iterations do not help and names a tol; that tol fits.
    import re
    import warnings

    X = oose.datasets.s_curve(450, random_state=0)[:200]
    with pytest.raises(ValueError, match="stalled, so more iterations do not help") as e:
        oose.MaximumVarianceUnfolding(n_neighbors=5).fit(X)
    tol = float(re.search(r"tol = ([0-9.e+-]+) or more accepts", str(e.value)).group(1))
    assert 1e-8 < tol <= 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", oose.FitWarning)
        est = oose.MaximumVarianceUnfolding(n_neighbors=5, tol=tol).fit(X)
    assert est.sdp_status_ in ("solved", "almost-solved")
    # Running out of iterations still says to raise max_iter; after 3 of them the gap is
    # 0.25, so no tol below 1 would accept that K and none is named.
    with pytest.raises(ValueError, match="max-iterations") as e:
        oose.MaximumVarianceUnfolding(max_iter=3).fit(oose.datasets.swiss_roll(60, random_state=0))
    assert "raise max_iter, or use more neighbours" in str(e.value) and "tol to" not in str(e.value)


def test_landmarks_take_more_points_than_exact_mvu():
    X = oose.datasets.swiss_roll(1400, random_state=0)
    with pytest.raises(ValueError, match="n_landmarks"):
        oose.MaximumVarianceUnfolding().fit(X[:1200])
    est = oose.MaximumVarianceUnfolding(n_neighbors=6, n_landmarks=30).fit(X[:1200])
    assert est.embedding_.shape == (1200, 2)
    assert est.landmarks_.shape == (30,) and len(set(est.landmarks_.tolist())) == 30
    assert est.info_["edge_constraints"] == "inequalities (≤)"
    assert est.max_constraint_violation_ <= 1e-6
    s = est.kernel_spectrum_
    assert (s[0] + s[1]) / est.objective_ > 0.95
    assert est.transform(X[1200:]).shape == (200, 2)
    assert oose.MaximumVarianceUnfolding().fit(X[:100]).landmarks_ is None
