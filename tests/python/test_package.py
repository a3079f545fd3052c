"""The Python package `oose`: results equal the CLI's (the same Rust library), pickling,
model files shared with the CLI, inputs of every kind, errors, pipelines, the GIL."""

import pickle
import threading
import time

import numpy as np
import pytest

import oose
from conftest import read_csv

X_ALL = oose.datasets.swiss_roll(700, noise=0.05, random_state=3)
TRAIN, NEW = X_ALL[:600], X_ALL[600:]

# (estimator, the same fit on the command line)
CASES = [
    (oose.KernelPCA(n_components=3), ["kpca", "--components", 3]),
    (
        oose.KernelPCA(n_components=2, kernel="laplacian", epsilon=5.0, centering=False),
        ["kpca", "--components", 2, "--kernel", "laplacian", "--epsilon", 5.0, "--centering", "false"],
    ),
    (oose.ClassicalMDS(n_components=2), ["mds", "--components", 2]),
    (
        oose.LandmarkMDS(n_components=2, n_landmarks=60, landmarks="random", random_state=4),
        ["landmark-mds", "--landmarks", 60, "--landmark-choice", "random", "--seed", 4],
    ),
    (oose.Isomap(n_neighbors=8), ["isomap", "--knn", 8]),
    (
        oose.DiffusionMaps(n_neighbors=15, alpha=0.5, t=2.0, output="diffusion"),
        ["dmaps", "--knn", 15, "--alpha", 0.5, "--time", 2.0, "--output-kind", "diffusion"],
    ),
    (
        oose.DiffusionMaps(sparsity="dense", epsilon=20.0, output="weighted"),
        ["dmaps", "--sparsity", "dense", "--epsilon", 20.0, "--output-kind", "weighted"],
    ),
    (oose.LaplacianEigenmaps(n_neighbors=10), ["eigenmaps", "--knn", 10]),
    (
        oose.SpectralClustering(n_clusters=3, n_neighbors=10),
        ["spectral-clustering", "--clusters", 3, "--knn", 10],
    ),
    (oose.LocallyLinearEmbedding(n_neighbors=10), ["lle", "--knn", 10]),
    (oose.TSNE(perplexity=10.0, max_iter=300), ["tsne", "--perplexity", 10.0, "--max-iter", 300]),
    (
        oose.UMAP(n_neighbors=10, n_epochs=60, random_state=3),
        ["umap", "--n-neighbors", 10, "--n-epochs", 60, "--seed", 3],
    ),
]
IDS = [type(e).__name__ + str(i) for i, (e, _) in enumerate(CASES)]


def cli_fit_extend(run, tmp_path, args, train=TRAIN, new=NEW, extra_fit=()):
    np.save(tmp_path / "train.npy", train)
    np.save(tmp_path / "new.npy", new)
    model = tmp_path / "m.oose"
    run("fit", *args, "--input", tmp_path / "train.npy", *extra_fit, "--output", model)
    run("embedding", model, "--output", tmp_path / "emb.csv")
    run("extend", model, "--input", tmp_path / "new.npy", "--diagnostics",
        "--output", tmp_path / "ext.csv")
    _, emb = read_csv(tmp_path / "emb.csv")
    header, ext = read_csv(tmp_path / "ext.csv")
    return model, emb, header, ext


def assert_equal_diagnostics(header, ext, coords, diag):
    d = coords.shape[1]
    np.testing.assert_array_equal(ext[:, :d], coords)
    for j, name in enumerate(header[d:], start=d):
        if name == "cluster":
            continue
        np.testing.assert_array_equal(ext[:, j], diag[name], err_msg=name)
    assert set(header[d:]) == set(diag), (header, list(diag))


@pytest.mark.parametrize("est,args", CASES, ids=IDS)
def test_python_equals_cli(tmp_path, run, est, args):
    """Same data, same parameters: the Python estimator and `oose` give the same numbers
    (the CLI writes shortest round-trip decimals, so equality is exact)."""
    model, emb, header, ext = cli_fit_extend(run, tmp_path, args)
    est.fit(TRAIN)
    coords, diag = est.transform(NEW, return_diagnostics=True)
    np.testing.assert_array_equal(emb, est.embedding_)
    assert_equal_diagnostics(header, ext, coords, diag)
    # Without --diagnostics the CLI computes the coordinates alone: the same numbers.
    run("extend", model, "--input", tmp_path / "new.npy", "--output", tmp_path / "only.csv")
    header_only, only = read_csv(tmp_path / "only.csv")
    assert header_only == header[: coords.shape[1]]
    np.testing.assert_array_equal(only, coords)
    # The CLI's model file loads in Python and extends identically (`transform`
    # without diagnostics: the coordinates alone, computed on their own).
    loaded = oose.load(model)
    assert type(loaded) is type(est)
    np.testing.assert_array_equal(loaded.transform(NEW), coords)
    assert loaded.model_.info() == est.model_.info()
    # Without the Python annotations, the constructor parameters come from the core's
    # record of the fit: the same as the estimator's (kernel PCA records the ε that
    # "auto" chose).
    want = est.get_params()
    if isinstance(est, oose.KernelPCA) and est.epsilon == "auto":
        want["epsilon"] = est.info_["epsilon"]
    assert loaded.get_params() == want


def test_interpolator_equals_cli(tmp_path, run):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (150, 2))
    f = np.column_stack([np.sin(3 * x[:, 0]) * x[:, 1], np.cos(x.sum(1))])
    z = rng.uniform(-1, 1, (40, 2))
    np.save(tmp_path / "f.npy", f)
    model, emb, header, ext = cli_fit_extend(
        run, tmp_path, ["interpolate", "--kernel", "thin_plate"], train=x, new=z,
        extra_fit=["--values", tmp_path / "f.npy"],
    )
    est = oose.KernelInterpolator(kernel="thin_plate").fit(x, f)
    values, power = est.predict(z, return_power_function=True)
    np.testing.assert_array_equal(ext[:, :2], values)
    np.testing.assert_array_equal(emb, f)
    assert np.isnan(power).all()  # conditionally positive definite: no power function
    np.testing.assert_array_equal(est.predict(z), values)  # the values alone: the same
    # ||f_X||²_H per column, as `oose info` prints it for the CLI's model.
    line = next(l for l in run("info", model).splitlines() if l.startswith("norm_h_squared:"))
    cli_norms = [float(v) for v in line.split(": ", 1)[1].split(",")]
    np.testing.assert_array_equal(est.norms_squared_, cli_norms)
    assert est.norms_squared_.shape == (2,)
    # 1-D targets give 1-D predictions equal to the first column (to the round-off of
    # solving for one right-hand side instead of two).
    one = oose.KernelInterpolator(kernel="thin_plate").fit(x, f[:, 0])
    assert one.predict(z).shape == (40,)
    np.testing.assert_allclose(one.predict(z), values[:, 0], rtol=0, atol=1e-12)


def test_predict_without_diagnostics_gives_the_same_values():
    """A Gaussian interpolant has a power function; asked for the values alone, the
    model computes neither it nor the novelty score, and the values are the same bits."""
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (300, 3))
    f = np.column_stack([np.sin(x.sum(1)), x[:, 0] * x[:, 1]])
    z = rng.uniform(-1.5, 1.5, (40, 3))
    est = oose.KernelInterpolator(kernel="gaussian").fit(x, f)
    values, power, diag = est.predict(z, return_power_function=True, return_diagnostics=True)
    assert (power > 0).all() and np.isfinite(diag["novelty"]).all()
    np.testing.assert_array_equal(est.predict(z), values)
    coords, empty = est.model_.extend(z, diagnostics=False)
    np.testing.assert_array_equal(coords, values)
    assert empty == {}


def test_proximity_input_equals_cli(tmp_path, run):
    d2 = ((TRAIN[:200, None] - TRAIN[None, :200]) ** 2).sum(-1)
    a2 = ((NEW[:, None] - TRAIN[None, :200]) ** 2).sum(-1)
    _, emb, header, ext = cli_fit_extend(
        run, tmp_path, ["mds", "--components", 2], train=d2, new=a2,
    )
    # `cli_fit_extend` passed d2 with --input (points); redo with proximities:
    np.save(tmp_path / "d2.npy", d2)
    np.save(tmp_path / "a2.npy", a2)
    model = tmp_path / "p.oose"
    run("fit", "mds", "--squared-dissimilarities", tmp_path / "d2.npy", "--output", model)
    run("extend", model, "--input", tmp_path / "a2.npy", "--diagnostics", "--strategy",
        "restricted", "--output", tmp_path / "r.csv")
    header, ext = read_csv(tmp_path / "r.csv")
    est = oose.ClassicalMDS(input="squared-dissimilarities", strategy="restricted").fit(d2)
    coords, diag = est.transform(a2, return_diagnostics=True)
    assert_equal_diagnostics(header, ext, coords, diag)
    assert est.__sklearn_tags__().input_tags.pairwise


def test_saved_model_extends_through_the_cli(tmp_path, run):
    est = oose.Isomap(n_neighbors=8).fit(TRAIN)
    est.save(tmp_path / "py.oose")
    np.save(tmp_path / "new.npy", NEW)
    run("extend", tmp_path / "py.oose", "--input", tmp_path / "new.npy",
        "--output", tmp_path / "ext.csv")
    _, ext = read_csv(tmp_path / "ext.csv")
    np.testing.assert_array_equal(ext, est.transform(NEW))
    info = run("info", tmp_path / "py.oose")
    assert "method: isomap" in info and "n_neighbors: 8" in info


@pytest.mark.parametrize("est,args", CASES, ids=IDS)
def test_pickle_round_trip_is_identical(est, args):
    est.fit(TRAIN)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.transform(NEW), est.transform(NEW))
    np.testing.assert_array_equal(back.embedding_, est.embedding_)
    assert back.get_params() == est.get_params()
    # The model travels as its bytes in the model file format.
    assert est.model_.to_bytes()[:8] == b"OOSE\0MDL"
    assert back.model_.to_bytes() == est.model_.to_bytes()


def test_inputs_of_every_kind_give_the_same_result():
    import pandas as pd

    est = oose.KernelPCA(n_components=2, epsilon=50.0).fit(TRAIN)
    ref = est.transform(NEW)
    for z in [NEW.tolist(), np.asfortranarray(NEW), pd.DataFrame(NEW)]:
        np.testing.assert_array_equal(est.transform(z), ref)
    # float32 input is converted to float64 (the values change by the rounding of f32).
    y32 = est.transform(NEW.astype(np.float32))
    assert y32.dtype == np.float64
    np.testing.assert_allclose(y32, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
    # A strided (non-contiguous) view is copied to C order, not misread.
    big = np.zeros((NEW.shape[0], 6))
    big[:, ::2] = NEW
    view = big[:, ::2]
    assert not view.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(est.transform(view), ref)


def test_ready_arrays_skip_validation_and_nothing_else_does(monkeypatch):
    import warnings

    import pandas as pd
    import oose._base as base

    est = oose.KernelPCA(n_components=2, epsilon=50.0).fit(TRAIN)
    ref = est.transform(NEW)
    calls = []
    full = base.validate_data
    monkeypatch.setattr(base, "validate_data", lambda *a, **k: calls.append(1) or full(*a, **k))
    # A finite, aligned, C-contiguous float64 array of the fitted width goes straight in.
    np.testing.assert_array_equal(est.transform(NEW), ref)
    assert calls == []
    # Everything else is validated by scikit-learn, with its messages.
    for z in [NEW.tolist(), NEW.astype(np.float32), np.asfortranarray(NEW), NEW[:, :2]]:
        calls.clear()
        try:
            est.transform(z)
        except ValueError as e:
            assert "features" in str(e)  # the wrong width, as scikit-learn words it
        assert calls == [1]
    bad = NEW.copy()
    bad[3, 1] = np.nan
    calls.clear()
    with pytest.raises(ValueError, match="NaN"):
        est.transform(bad)
    assert calls == [1]
    # Fitted on a DataFrame: a bare array still gets scikit-learn's feature-name warning.
    named = oose.KernelPCA(n_components=2, epsilon=50.0).fit(
        pd.DataFrame(TRAIN, columns=["a", "b", "c"]))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        named.transform(NEW)
    assert any("feature names" in str(x.message) for x in w)


def test_rust_errors_arrive_as_value_error_with_the_cli_message(tmp_path, oose_bin):
    import subprocess

    d2 = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [4.0, 1.0, 0.0]])  # not symmetric
    np.save(tmp_path / "d2.npy", d2)
    out = subprocess.run(
        [oose_bin, "fit", "mds", "--squared-dissimilarities", tmp_path / "d2.npy",
         "--output", tmp_path / "m.oose"],
        capture_output=True, text=True,
    )
    assert out.returncode == 1
    cli_message = out.stderr.strip().split(": ", 2)[-1]  # "oose: FILE: message"
    with pytest.raises(ValueError) as e:
        oose.ClassicalMDS(input="squared-dissimilarities").fit(d2)
    assert str(e.value) == cli_message
    assert "row 1, column 0" in str(e.value)
    # Parameters are checked by name.
    with pytest.raises(ValueError, match="solver"):
        oose.KernelPCA(solver="arpack").fit(TRAIN)
    with pytest.raises(ValueError, match="epsilon"):
        oose.KernelPCA(epsilon=-1.0).fit(TRAIN)
    with pytest.raises(ValueError, match="beta"):
        oose.KernelPCA(kernel="gaussian", beta=2.0).fit(TRAIN)
    with pytest.raises(ValueError, match="n_neighbors"):
        oose.Isomap(n_neighbors=0).fit(TRAIN)
    with pytest.raises(ValueError, match="strategy"):
        oose.DiffusionMaps(n_neighbors=10).fit(TRAIN).model_.extend(NEW, strategy="nope")
    with pytest.raises(ValueError, match="random_state"):
        oose.LandmarkMDS(random_state=1.5).fit(TRAIN)


def test_restricted_reconstruction_and_joint_from_python():
    """Seed 001 Example 2 through the package: y* = (0, ±19.1833), λ* = −32, not unique."""
    d2 = np.array([[0, 100, 45, 45], [100, 0, 45, 45], [45, 45, 0, 64], [45, 45, 64, 0.0]])
    est = oose.ClassicalMDS(input="squared-dissimilarities", strategy="restricted").fit(d2)
    y, diag = est.transform([[386, 386, 457, 457.0]], return_diagnostics=True)
    assert abs(abs(y).max() - np.sqrt(368)) < 1e-10
    assert abs(diag["lambda"][0] + 32) < 1e-10 and diag["unique"][0] == 0
    np.testing.assert_allclose(est.eigenvalues_, [50, 32], rtol=1e-12)
    # Joint reconstruction of two Swiss-roll points is no worse than one by one.
    iso = oose.Isomap(n_neighbors=8).fit(TRAIN)
    y, info = iso.model_.extend_joint(NEW[:2] + np.array([0, 0, 8.0]))
    assert y.shape == (2, 2)
    assert info["objective"] <= info["objective_one_by_one"] * (1 + 1e-12)
    arc = iso.model_.arc(NEW[:1], 4)
    assert len(arc) == 5 and arc[0][1] == 0.0


def test_spectral_clustering_predict_agrees_with_labels():
    x = oose.datasets.three_d_clusters(300, random_state=2)
    est = oose.SpectralClustering(n_clusters=3, n_neighbors=10).fit(x)
    np.testing.assert_array_equal(est.predict(x), est.labels_)
    # Three clusters of real size are found (not one cluster and two stray points).
    assert np.bincount(est.labels_, minlength=3).min() > 50, np.bincount(est.labels_)


def test_pipeline_and_grid_search():
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn.decomposition import PCA

    x = oose.datasets.swiss_roll(500, noise=0.05, random_state=5)
    t = np.arctan2(x[:, 2], x[:, 0])
    # Inner against outer half of the roll: linear along the unrolled sheet, not in 3-D.
    r = np.hypot(x[:, 0], x[:, 2])
    label = (r > np.median(r)).astype(int)
    pipe = Pipeline([("iso", oose.Isomap()), ("clf", LogisticRegression())])
    grid = GridSearchCV(pipe, {"iso__n_neighbors": [8, 12], "iso__n_components": [1, 2]}, cv=3)
    grid.fit(x, label)
    linear = GridSearchCV(Pipeline([("pca", PCA()), ("clf", LogisticRegression())]),
                          {"pca__n_components": [1, 2]}, cv=3).fit(x, label)
    assert grid.best_score_ > 0.9 > linear.best_score_ + 0.1, (grid.best_score_, linear.best_score_)
    assert grid.best_estimator_.named_steps["iso"].embedding_.shape[0] == 500
    # In a pipeline, transform is the composition of the fitted steps.
    scaled = Pipeline([("scale", StandardScaler()), ("kpca", oose.KernelPCA(n_components=4))])
    scaled.fit(x[:400])
    by_hand = scaled.named_steps["kpca"].transform(scaled.named_steps["scale"].transform(x[400:]))
    np.testing.assert_array_equal(scaled.transform(x[400:]), by_hand)
    reg = GridSearchCV(oose.KernelInterpolator(kernel="gaussian"),
                       {"regularization": [1e-6, 1e-2], "epsilon": ["auto", 30.0]}, cv=3)
    reg.fit(x, np.cos(t))
    assert reg.best_score_ > 0.5, reg.best_score_
    lin = Pipeline([("dm", oose.DiffusionMaps(n_neighbors=15)), ("lr", LinearRegression())])
    assert lin.fit(x, label).score(x, label) > 0.3


def test_gil_is_released_during_fit():
    """Another Python thread keeps running while Rust fits: with the GIL held it could
    not take a single step."""
    x = oose.datasets.swiss_roll(2500, random_state=0)
    steps = 0
    done = threading.Event()

    def fit():
        oose.Isomap(n_neighbors=10, solver="dense").fit(x)
        done.set()

    th = threading.Thread(target=fit)
    start = time.perf_counter()
    th.start()
    while not done.is_set():
        steps += 1
        time.sleep(0.001)
    th.join()
    elapsed = time.perf_counter() - start
    assert elapsed > 0.05, "fit too quick to tell"
    assert steps >= 10, (steps, elapsed)


def test_datasets_match_the_cli(tmp_path, run):
    run("dataset", "s-curve", "--n", 100, "--noise", 0.1, "--seed", 7,
        "--output", tmp_path / "s.csv")
    _, s = read_csv(tmp_path / "s.csv")
    np.testing.assert_array_equal(s, oose.datasets.s_curve(100, noise=0.1, random_state=7))
