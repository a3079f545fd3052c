"""Every fitted attribute of every estimator is documented: in the class's docstring
or in the common list of OoseEstimator's (the parameters are checked by the API
reference build, numpydoc's PR01/PR02, in scripts/test)."""

import numpy as np
import pytest

import oose
from oose import _ESTIMATORS


def _fitted(cls):
    X = oose.datasets.swiss_roll(200, random_state=0)
    if cls is oose.KernelInterpolator:
        return cls().fit(X, np.sin(X[:, 0]))
    extra = {"max_iter": 250} if cls is oose.TSNE else {}
    return cls(**extra).fit(X)


@pytest.mark.parametrize("cls", _ESTIMATORS, ids=lambda c: c.__name__)
def test_every_fitted_attribute_is_documented(cls):
    est = _fitted(cls)
    fitted = [a for a in vars(est) if a.endswith("_") and not a.startswith("_")]
    assert fitted, cls.__name__
    docs = (cls.__doc__ or "") + (oose.OoseEstimator.__doc__ or "")
    missing = [a for a in fitted if f"{a}" not in docs]
    assert not missing, f"{cls.__name__}: undocumented fitted attributes {missing}"
