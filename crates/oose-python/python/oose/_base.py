"""What every oose estimator shares: input validation, fitting through the Rust core,
extension with per-point diagnostics, pickling through the model file format, save/load.
"""

from __future__ import annotations

import numbers
import os

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from . import _oose


def _load_model(path) -> "_oose.Model":
    with open(os.fspath(path), "rb") as f:
        return _oose.Model.from_bytes(f.read())


def _aligned(a):
    return np.require(a, dtype=np.float64, requirements=["C_CONTIGUOUS", "ALIGNED"])


def _seed(random_state, name="random_state") -> int:
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"{name}: must be >= 0, got {random_state}")
        return int(random_state)
    raise ValueError(
        f"{name}: expected an int seed (oose's choices are deterministic given it), "
        f"got {random_state!r}"
    )


#: Constructor parameters that are not the core's fit parameters: extension options,
#: and what the matrix given to ``fit`` holds (classical MDS).
_NOT_FIT_PARAMS = ("strategy", "input")


class OoseEstimator(BaseEstimator):
    """Base class of the oose estimators (not for direct use).

    A subclass names its method of the Rust registry (``_method``) and declares
    scikit-learn's explicit ``__init__``; its parameters go to the core under their
    SPEC names (``random_state`` as ``seed``), where their defaults are defined (a test
    checks that the ``__init__`` defaults agree). Everything else (validation,
    ``transform``, diagnostics, pickling, ``save``/``load``) is here.

    Fitted attributes common to all estimators:

    ``model_``
        The fitted Rust model (``oose._oose.Model``): ``info()``, ``to_bytes()``,
        ``extend_joint(...)``, ``arc(...)``.
    ``embedding_``
        The training embedding (N×d).
    ``n_features_in_``
        Number of columns seen in ``fit`` (N for kernel or proximity matrices).
    ``info_``
        A dict of what ``oose info`` prints: parameters actually used (the ε chosen by
        ``"auto"``), solver, eigenvalues, sizes.
    """

    #: the model's method name (`oose info` prints it); checked by ``load``
    _method: str = ""

    # -- hooks -----------------------------------------------------------------------
    def _core_params(self) -> dict:
        """The constructor parameters as the core's fit parameters."""
        out = {}
        for k, v in self.get_params(deep=False).items():
            if k in _NOT_FIT_PARAMS:
                continue
            if k == "random_state":
                out["seed"] = _seed(v)
            elif isinstance(v, np.generic):
                out[k] = v.item()
            else:
                out[k] = v
        return out

    def _fit_model(self, X, y, **inputs):
        """Fits the method through the core's registry; ``inputs`` are ``values`` (the
        function values of an interpolant) or ``input`` (what ``X`` holds)."""
        if "input" in self.get_params(deep=False):
            inputs.setdefault("input", self.input)
        return _oose.fit(self._method, X, self._core_params(), **inputs)

    def _extend_options(self) -> dict:
        """Keyword arguments of ``Model.extend`` taken from the constructor."""
        return {}

    def _pairwise(self) -> bool:
        """True when X is an N×N kernel or proximity matrix rather than points."""
        return False

    # -- scikit-learn contract ---------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._pairwise()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags

    def _validate(self, X, *, reset: bool):
        if not reset and self._ready(X):
            return X
        X = validate_data(
            self,
            X,
            reset=reset,
            dtype=np.float64,
            order="C",
            ensure_min_samples=2 if reset else 1,
        )
        # Arrays rebuilt from network frames (Dask workers) can be C-contiguous but
        # unaligned; Rust reads aligned f64 only.
        return _aligned(X)

    def _ready(self, X) -> bool:
        """True for new points that ``validate_data`` would hand back unchanged: a
        finite, aligned, C-contiguous float64 ndarray of the fitted width, for an
        estimator fitted without feature names. They skip its checks (a third of a
        millisecond, as much as extending a few hundred points); anything else takes
        the full path and its messages."""
        return (
            type(X) is np.ndarray
            and X.dtype == np.float64
            and X.ndim == 2
            and X.shape[0] >= 1
            and X.shape[1] == getattr(self, "n_features_in_", -1)
            and X.flags.c_contiguous
            and X.flags.aligned
            and not hasattr(self, "feature_names_in_")
            and bool(np.isfinite(X).all())
        )

    def _fitted(self, model) -> None:
        """Sets the fitted attributes from the Rust model."""
        self.model_ = model
        self.embedding_ = model.embedding()
        self.info_ = dict(model.info())
        ev = model.eigenvalues()
        if ev is not None:
            self.eigenvalues_ = np.asarray(ev)
        cal = model.novelty_calibration
        if cal is not None:
            self.novelty_calibration_ = np.asarray(cal)

    def fit(self, X, y=None):
        """Fits the method on the rows of ``X`` (N×D points, or the N×N matrix for a
        precomputed kernel or proximities). Returns ``self``."""
        X = self._validate(X, reset=True)
        self._fitted(self._fit_model(X, y))
        return self

    def _extend(self, X, alpha=None):
        check_is_fitted(self, "model_")
        X = self._validate(X, reset=False)
        return self.model_.extend(X, **self._extend_options(), alpha=alpha)

    # -- files and pickling ------------------------------------------------------------
    def save(self, path) -> None:
        """Writes the fitted model to ``path`` in the file format of ``oose fit`` (the
        CLI reads it: ``oose extend path --input new.npy``)."""
        check_is_fitted(self, "model_")
        with open(os.fspath(path), "wb") as f:
            f.write(self.model_.to_bytes())

    @classmethod
    def load(cls, path, **params):
        """An estimator fitted from a model file written by ``save`` or by ``oose fit``.

        ``params`` set constructor parameters that apply at extension time (for
        example ``strategy``); the fitted parameters are those stored in the file
        (see ``info_``).
        """
        model = _load_model(path)
        if cls._method and model.method != cls._method:
            raise ValueError(
                f"{os.fspath(path)}: holds a {model.method} model, not {cls._method} "
                f"(use oose.load to get the matching estimator)"
            )
        est = cls(**params)
        est._fitted(model)
        est.n_features_in_ = model.input_width
        return est


class OoseTransformerMixin:
    """``transform`` with optional diagnostics and ``fit_transform`` = the training
    embedding (the extension of the training points equals it to round-off)."""

    def transform(self, X, return_diagnostics: bool = False, alpha=None):
        """Embeds the rows of ``X`` into the fitted embedding without refitting.

        Rows are independent: the result for a row does not depend on the others in
        ``X`` (except for diffusion maps with ``density="union"``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New points (for a precomputed kernel or proximities: their rows against
            the training objects).
        return_diagnostics : bool, default=False
            Also return the per-point diagnostics.
        alpha : float in (0, 1), optional
            Level of ``is_novel``: a row is flagged when its novelty p-value is at most
            ``alpha``, so about a fraction ``alpha`` of rows drawn like the training
            data are flagged. Default: the model's (0.01).

        Returns
        -------
        coordinates : ndarray of shape (n_samples, n_components)
        diagnostics : dict of ndarray, only with ``return_diagnostics=True``
            One value per row: ``novelty`` (larger = less like the training data, in
            the data's units: the mean distance to the 10 nearest training points,
            corrected for how spread the training data is there), ``novelty_pvalue``
            (conformal p-value against the training points' leave-one-out scores),
            ``is_novel`` (``novelty_pvalue <= alpha``), ``residual`` (k₀(z, z), the
            squared power function of the kernel), ``reconstruction_error`` and the
            method's own columns (the CLI's ``--diagnostics`` columns). See
            docs/diagnostics.md for what to threshold.
        """
        coords, diag = self._extend(X, alpha)
        return (coords, diag) if return_diagnostics else coords

    def fit_transform(self, X, y=None):
        """Fits and returns the training embedding (one row per row of ``X``; rows left
        out of the fit, such as points outside Isomap's largest component, are
        extended)."""
        self.fit(X, y)
        if self.embedding_.shape[0] == len(self.model_.kept()) == _num_samples(X):
            return self.embedding_.copy()
        return self.transform(X)
