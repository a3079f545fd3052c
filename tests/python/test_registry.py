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
