"""The estimators are built on the core's registry: every registered method with an
estimator, the estimators' defaults equal to the core's (defined once, in Rust), fit
parameters passed by SPEC name, unknown ones refused, and a loaded model's parameters."""

import inspect

import numpy as np
import pytest

import oose
from oose import _oose

# Constructor parameters that are not fit parameters of the core (extension options,
# what X holds, threads, progress) and the scikit-learn spelling of the core's names.
NOT_FIT = {"strategy", "extension", "lowrank_tolerance", "input", "n_jobs", "verbose"}
RENAMED = {"random_state": "seed"}


def test_every_registered_method_but_pca_has_an_estimator():
    # PCA is KernelPCA(kernel="linear") in Python (scikit-learn has PCA).
    assert set(_oose.methods()) - set(oose._BY_METHOD) == {"pca"}


@pytest.mark.parametrize("cls", oose._ESTIMATORS, ids=lambda c: c.__name__)
def test_estimator_defaults_are_the_cores(cls):
    # An estimator of two methods (KernelPCA: kpca, and kpca-nystrom with
    # n_landmarks) has both methods' parameters, equal where shared.
    core = {}
    for method in getattr(cls, "_methods", (cls._method,)):
        for k, v in _oose.defaults(method).items():
            assert core.get(k, v) == v, (method, k, core[k], v)
            core[k] = v
    sig = inspect.signature(cls.__init__).parameters
    mine = {
        RENAMED.get(k, k): p.default
        for k, p in sig.items()
        if k != "self" and k not in NOT_FIT
    }
    if len(getattr(cls, "_methods", ())) > 1:
        # n_landmarks=None is the exact fit: the core's default is the landmark form's.
        assert mine.pop("n_landmarks") is None
        core.pop("n_landmarks")
    assert set(mine) == set(core), (set(mine) ^ set(core))
    for k, v in core.items():
        # A list of widths is text in the core ("256,64"), a tuple in Python.
        if isinstance(mine[k], tuple):
            mine[k] = ",".join(str(w) for w in mine[k])
        # The core's None is "the method's rule", which Python may spell "auto".
        assert mine[k] == v or (v is None and mine[k] in (None, "auto")), (k, mine[k], v)


def test_fit_refuses_an_unknown_parameter_by_name():
    X = oose.datasets.s_curve(60, random_state=0)
    with pytest.raises(ValueError, match="no parameter `n_neighbours`"):
        _oose.fit("isomap", X, {"n_neighbours": 5})
    with pytest.raises(ValueError, match="n_neighbors"):
        _oose.fit("isomap", X, {"n_neighbors": -1})


def test_model_params_are_what_was_fitted():
    X = oose.datasets.s_curve(200, random_state=1)
    est = oose.DiffusionMaps(n_neighbors=15, alpha=0.5, epsilon=0.4).fit(X)
    p = est.model_.params()
    assert (p["n_neighbors"], p["alpha"], p["epsilon"]) == (15, 0.5, 0.4)
    assert p["sparsity"] == "knn" and p["output"] == "diffusion"
    # The bytes round trip keeps them.
    back = _oose.Model.from_bytes(est.model_.to_bytes())
    assert back.params() == p
    np.testing.assert_array_equal(back.embedding(), est.embedding_)


def _fit(est, X):
    return est.fit(X, X[:, 0]) if isinstance(est, oose.KernelInterpolator) else est.fit(X)


@pytest.mark.filterwarnings("ignore:.*semidefinite program stopped short")
@pytest.mark.parametrize("cls", oose._ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_checked_at_fit_whether_or_not_it_is_read(cls):
    # NaN for every parameter that takes a number or a name, and a name that is none
    # of the choices (for an integer one, 2.5 too): refused by fit, naming the
    # parameter, in every estimator, also where the configuration does not read it
    # (coef0 of a Gaussian kernel, kernel PCA's landmark choice without n_landmarks)
    # and where only transform reads it (strategy, extension, lowrank_tolerance), so
    # that fit_transform cannot pass one.
    X = oose.datasets.s_curve(40, random_state=2)
    for name, default in cls().get_params().items():
        if name in ("random_state", "n_jobs", "verbose") or isinstance(default, (bool, tuple)):
            continue
        integer = isinstance(default, int)
        for bad in (float("nan"), "zzz") + ((2.5,) if integer else ()):
            with pytest.raises(ValueError, match=name) as e:
                _fit(cls(**{name: bad}), X)
            assert "Traceback" not in str(e.value)
    if "coef0" in cls().get_params():
        with pytest.raises(ValueError, match="coef0`: must be finite, got inf"):
            _fit(cls(kernel="gaussian", coef0=float("inf")), X)
    if "input" in cls().get_params():
        with pytest.raises(ValueError, match="`input`: expected a name, got None"):
            _fit(cls(input=None), X)
    for name, bad in [("n_jobs", 2.5), ("n_jobs", "zzz"), ("verbose", "zzz"), ("verbose", None)]:
        with pytest.raises(ValueError, match=name):
            _fit(cls(**{name: bad}), X)
    # A valid value that this fit does not read stays accepted (scikit-learn's rule).
    est = _fit(cls(), X)
    assert est.embedding_.shape[0] == 40


def test_a_transform_option_the_model_lacks_is_refused_by_fit_and_load(tmp_path):
    X = oose.datasets.s_curve(60, random_state=3)
    with pytest.raises(ValueError, match="restricted reconstruction is for the inner-product"):
        oose.TSNE(strategy="restricted", perplexity=10).fit_transform(X)
    with pytest.raises(ValueError, match="low-rank needs a dense kernel"):
        oose.DiffusionMaps(n_neighbors=10, extension="low-rank").fit(X)
    est = oose.KernelPCA(kernel="gaussian", coef0=7.5, landmarks="random").fit(X)
    est.save(tmp_path / "k.oose")
    with pytest.raises(ValueError, match="`strategy`: expected one of"):
        oose.KernelPCA.load(tmp_path / "k.oose", strategy="restriced")
    with pytest.raises(ValueError, match="`lowrank_tolerance`: expected a real number"):
        oose.KernelPCA.load(tmp_path / "k.oose", lowrank_tolerance="1e-3")
    # Changed after the fit: transform checks again, naming it.
    est.set_params(strategy=None)
    with pytest.raises(ValueError, match="`strategy`: expected a name, got None"):
        est.transform(X[:3])
    with pytest.raises(ValueError, match="no extension option `alpha`"):
        _oose.check_extend_options(alpha=0.1)
    with pytest.raises(ValueError, match="`landmarks`: expected one of"):
        _oose.check_params("kpca-nystrom", {"landmarks": "pgreedy"})
