"""What every oose estimator shares: input validation, fitting through the Rust core,
extension with per-point diagnostics, scikit-learn's output API, pickling through the
model file format, save/load with the constructor parameters.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from . import _oose

try:  # scikit-learn's set_output configuration (private, stable since 1.2)
    from sklearn.utils._set_output import _get_output_config
except ImportError:  # pragma: no cover - a future scikit-learn that moved it
    _get_output_config = None

#: Prefix of the model-file annotations that hold the Python constructor parameters.
_PARAM_KEY = "python."


class FitWarning(UserWarning):
    """What a fit decided that the user should know: a disconnected neighbour graph
    connected (Isomap) or embedded component by component (the diffusion methods)."""


class NoveltyWarning(UserWarning):
    """``is_novel`` cannot be set at the level asked: ``alpha`` is below the smallest
    novelty p-value, 1 / (N + 1) for N training points (at the default 0.01, fewer than
    99). The warning names the smallest level that can be reached."""


#: Folders whose frames a warning is not attributed to: this package's, and
#: scikit-learn's (its output wrapper around ``transform``, pipelines, meta-estimators).
_INTERNAL = tuple(
    os.path.dirname(m.__file__) + os.sep for m in (__import__("oose"), __import__("sklearn"))
)


def _warn(message: str, category: type[Warning]) -> None:
    """Gives a warning attributed to the line of the user's code that called into oose:
    the first frame outside oose and scikit-learn (a fixed ``stacklevel`` points at
    whichever wrapper happens to sit above oose's own frames)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def _load_model(path) -> "_oose.Model":
    with open(os.fspath(path), "rb") as f:
        return _oose.Model.from_bytes(f.read())


_INT = re.compile(r"^[+-]?\d+$")


def _typed(text: str):
    """A value of ``Model.info()`` (text) as what it is: a bool, an int, a float, an
    array of floats (comma-separated numbers) or, failing those, the text."""
    if text in ("true", "false"):
        return text == "true"
    if _INT.match(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        pass
    if "," in text:
        try:
            return np.array([float(p) for p in text.split(",")])
        except ValueError:
            pass
    return text


def _params_of(cls, model) -> dict:
    """The constructor parameters of ``cls`` that ``model`` was fitted with: those the
    Python estimator stored with it, else the core's by SPEC name (a file written by
    ``oose fit``: ``seed`` is ``random_state``; what the core does not record keeps
    the constructor's default; kernel PCA and the interpolator record the ε that
    ``"auto"`` chose, which refits the same model on the same data)."""
    names = cls._get_param_names()
    stored = {
        k[len(_PARAM_KEY):]: json.loads(v)
        for k, v in model.annotations().items()
        if k.startswith(_PARAM_KEY)
    }
    if stored:
        return {k: v for k, v in stored.items() if k in names}
    core = dict(model.params())
    if "seed" in core:
        core["random_state"] = core.pop("seed")
    info = dict(model.info())
    if "input" in names and "input" in info:
        core["input"] = info["input"]
    # The core's None is "the method's rule": the constructor's default spells it.
    return {k: core[k] for k in names if core.get(k) is not None}


def _aligned(a):
    return np.require(a, dtype=np.float64, requirements=["C_CONTIGUOUS", "ALIGNED"])


def _seed(random_state, name="random_state") -> int:
    """The core's seed from scikit-learn's ``random_state``: an int is the seed; None
    draws a fresh one from the operating system's entropy; a ``RandomState`` or
    ``Generator`` draws one from its stream (and advances it)."""
    if isinstance(random_state, bool):
        raise ValueError(f"{name}: expected an int, None or a RandomState, got a bool")
    if isinstance(random_state, numbers.Integral):
        if not 0 <= random_state <= 2**64 - 1:
            raise ValueError(f"{name}: must be between 0 and 2**64 - 1, got {random_state}")
        return int(random_state)
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(check_random_state(random_state).randint(0, 2**31 - 1))
    raise ValueError(
        f"{name}: expected an int seed, None (fresh entropy), a numpy RandomState or "
        f"Generator, got {random_state!r}"
    )


#: Constructor parameters that are not the core's fit parameters: extension options,
#: what the matrix given to ``fit`` holds (classical MDS), threads and progress.
_NOT_FIT_PARAMS = ("strategy", "extension", "lowrank_tolerance", "input", "n_jobs", "verbose")

#: Constructor parameters that ``load`` and ``from_bytes`` may set: they act at
#: extension time only (``density`` and ``on_isolated`` override a diffusion model's;
#: ``extension`` and ``lowrank_tolerance`` choose kernel PCA's kernel rows).
_LOAD_OPTIONS = (
    "strategy",
    "density",
    "on_isolated",
    "extension",
    "lowrank_tolerance",
    "n_jobs",
    "verbose",
)


#: The constructor parameters every estimator has, documented once (appended to each
#: estimator's Parameters section by ``_document_runtime``).
_RUNTIME_DOC = """    n_jobs : int or None, default=None
        Threads of ``fit`` and ``transform`` (a scoped pool: other code keeps its own).
        ``None`` or −1: all cores; −2: all but one; k > 0: k threads. Results do not
        depend on it (the methods are deterministic whatever the thread count).
    verbose : bool, default=False
        Print progress of long fits (the solver's stages, t-SNE's iterations and
        divergence, UMAP's epochs) to ``sys.stderr``, prefixed ``[oose]``.
"""


#: ``metric``, documented once for the neighbour methods that take it.
_METRIC_DOC = """    metric : {"euclidean", "cosine", "correlation"}, default="euclidean"
        How points are compared (maths §19). ``cosine`` compares directions: rows are
        scaled to unit length and compared by the chordal distance √(2(1 − cos θ)),
        which orders neighbours exactly as the cosine distance 1 − cos θ does;
        ``correlation`` centres each row on its own mean first (√(2(1 − r)), Pearson's
        r). New points are mapped the same way before they are placed and scored. A
        row of zeros (cosine) or a constant row (correlation) is an error naming it.
"""


def _document_runtime(cls):
    """Appends ``metric`` (where ``cls`` takes it), ``n_jobs`` and ``verbose`` to the
    Parameters section of ``cls``'s docstring (before its Attributes, Notes or
    Examples section)."""
    import inspect

    text = _RUNTIME_DOC
    if "metric" in inspect.signature(cls.__init__).parameters:
        text = _METRIC_DOC + text
    doc = cls.__doc__ or ""
    for head in ("\n    Attributes\n", "\n    Notes\n", "\n    Examples\n"):
        at = doc.find(head)
        if at >= 0:
            cls.__doc__ = doc[:at].rstrip("\n") + "\n" + text + doc[at:]
            return cls
    cls.__doc__ = doc.rstrip() + "\n" + text
    return cls


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
        A dict of what ``oose info`` prints, typed (numbers are numbers, flags are
        bools, lists of eigenvalues are arrays): parameters actually used (the ε chosen
        by ``"auto"``), solver, eigenvalues, sizes.
    ``seed_``
        The seed the fit used (``random_state`` resolved; estimators with a
        ``random_state`` only).
    ``eigenvalues_``
        The eigenvalues of the spectral methods' fit (largest first; kernel PCA,
        MDS, landmark MDS, Isomap, diffusion maps, spectral clustering), where the
        method has them.
    ``novelty_calibration_``
        The leave-one-out novelty scores of the training points, against
        which a new point's ``novelty_pvalue`` is computed (maths §18); absent where
        the model has no training data to measure against.

    ``save``, ``to_bytes`` and pickling store the constructor parameters with the model
    (as annotations of the model file): ``load``, ``from_bytes`` and unpickling give an
    estimator whose ``get_params()`` equals the original's, so ``clone`` of a loaded
    estimator refits with the same hyperparameters (a ``random_state`` given as a
    ``RandomState`` or ``Generator`` comes back as the int seed drawn from it).
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

    def _runtime(self) -> dict:
        """``n_jobs`` (threads of fit and transform; None: all cores)."""
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is not None and (
            isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
        ):
            raise ValueError(f"n_jobs: expected None or an int, got {n_jobs!r}")
        if n_jobs is not None and n_jobs > _oose.MAX_THREADS:
            # Checked here too: a count beyond a C long cannot reach the core's check.
            raise ValueError(f"n_jobs: at most {_oose.MAX_THREADS} threads, got {n_jobs}")
        # Below −(cores + 1) every count means one thread: clamped into a C long.
        return {"n_jobs": None if n_jobs is None else max(int(n_jobs), -(2**62))}

    def _verbose(self) -> bool:
        """``verbose`` as a flag (a bool or an int, as scikit-learn's; 0 is off)."""
        verbose = getattr(self, "verbose", False)
        if not isinstance(verbose, (bool, numbers.Integral)):
            raise ValueError(f"verbose: expected a bool or an int, got {verbose!r}")
        return bool(verbose)

    def _fit_model(self, X, y, **inputs):
        """Fits the method through the core's registry; ``inputs`` are ``values`` (the
        function values of an interpolant) or ``input`` (what ``X`` holds)."""
        if "input" in self.get_params(deep=False):
            inputs.setdefault("input", self.input)
            if inputs["input"] is None:  # the core would read a missing one as points
                raise ValueError("invalid parameter `input`: expected a name, got None")
        # Extension options are read by transform; a misspelt one is refused here,
        # before the fit, as scikit-learn validates every parameter at fit.
        _oose.check_extend_options(**self._extend_options())
        params = self._core_params()
        model = _oose.fit(
            self._method,
            X,
            params,
            annotations=self._annotations(params.get("seed")),
            verbose=self._verbose(),
            **self._runtime(),
            **inputs,
        )
        for message in model.fit_warnings():
            _warn(f"{type(self).__name__}: {message}", FitWarning)
        return model

    def _annotations(self, seed) -> dict:
        """The constructor parameters as model-file annotations (JSON text); a
        ``random_state`` that is not an int is stored as ``seed``, the one the fit drew."""
        out = {}
        for k, v in self.get_params(deep=False).items():
            if isinstance(v, np.generic):
                v = v.item()
            if k == "random_state" and v is not None and not isinstance(v, numbers.Integral):
                v = seed
            try:
                out[_PARAM_KEY + k] = json.dumps(v)
            except TypeError:  # not a literal: the core's record of it stands
                continue
        return out

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

    def _fitted(self, model, annotate=True) -> None:
        """Sets the fitted attributes from the Rust model; ``annotate``: store this
        estimator's parameters in it (False for a model read from a file, and for one
        from ``_fit_model``, which stored them at the fit)."""
        # Whether this model supports the extension options (restricted reconstruction
        # of a t-SNE model, a low-rank extension of a sparse kernel): known now, and
        # said now rather than by the first transform (fit_transform never calls one).
        model.check_options(**self._extend_options())
        if annotate:
            model = model.with_annotations(self._annotations(model.params().get("seed")))
        self.model_ = model
        self.embedding_ = model.embedding()
        self.info_ = {k: _typed(v) for k, v in model.info()}
        if "seed" in model.params():
            self.seed_ = model.params()["seed"]
        ev = model.eigenvalues()
        if ev is not None:
            self.eigenvalues_ = np.asarray(ev)
        cal = model.novelty_calibration
        if cal is not None:
            self.novelty_calibration_ = np.asarray(cal)

    def fit(self, X, y=None):
        """Fits the method on the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            N×D points, or the N×N matrix for a precomputed kernel or proximities.
        y : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        self : object
        """
        X = self._validate(X, reset=True)
        self._fitted(self._fit_model(X, y), annotate=False)
        return self

    def _extend(self, X, alpha=None, diagnostics=True, **options):
        check_is_fitted(self, "model_")
        X = self._validate(X, reset=False)
        opts = self._extend_options()
        # Checked again (a microsecond): set_params may have changed them since the fit.
        self.model_.check_options(**opts)
        # Without diagnostics only the coordinates are computed (the same, bitwise):
        # no novelty search, no residual.
        return self.model_.extend(
            X, **opts, alpha=alpha, diagnostics=diagnostics, **options, **self._runtime()
        )

    @property
    def _n_features_out(self):
        """Number of output columns (``get_feature_names_out`` names them)."""
        return self.embedding_.shape[1]

    # -- files and pickling ------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The fitted model in the file format of ``oose fit``, with this estimator's
        constructor parameters (:meth:`from_bytes` reads it back)."""
        check_is_fitted(self, "model_")
        return self.model_.to_bytes()

    def save(self, path) -> None:
        """Writes :meth:`to_bytes` to ``path`` (the CLI reads it: ``oose extend path
        --input new.npy``).

        Parameters
        ----------
        path : str or path-like
            Where to write the model file.
        """
        data = self.to_bytes()
        with open(os.fspath(path), "wb") as f:
            f.write(data)

    @classmethod
    def from_bytes(cls, data, **params):
        """The fitted estimator in ``data`` (bytes of :meth:`to_bytes`, of ``save``'s
        files or of ``oose fit``'s), with the constructor parameters it was fitted
        with; see :meth:`load`.

        Parameters
        ----------
        data : bytes-like
            The bytes of a model file.
        **params
            Extension-time constructor parameters to set, as for :meth:`load`.

        Returns
        -------
        estimator : OoseEstimator
        """
        return cls._from_model(_oose.Model.from_bytes(bytes(data)), "the bytes", params)

    @classmethod
    def load(cls, path, **params):
        """An estimator fitted from a model file written by ``save`` or by ``oose fit``.

        Its constructor parameters are those it was fitted with (a file written by
        ``oose fit``: the core's parameters, and the defaults of what the command line
        does not record). ``params`` set constructor parameters that apply at extension
        time (``strategy``, ``n_jobs``); a fit parameter given here is an error, since
        it would not describe the model.

        Parameters
        ----------
        path : str or path-like
            The model file.
        **params
            Extension-time constructor parameters (``strategy``, ``density``,
            ``on_isolated``, ``extension``, ``lowrank_tolerance``, ``n_jobs``,
            ``verbose``).

        Returns
        -------
        estimator : OoseEstimator
        """
        return cls._from_model(_load_model(path), os.fspath(path), params)

    @classmethod
    def _from_model(cls, model, where, params):
        methods = getattr(cls, "_methods", (cls._method,))
        if cls._method and model.method not in methods:
            raise ValueError(
                f"{where}: holds a {model.method} model, not {cls._method} "
                f"(use oose.load or oose.from_bytes to get the matching estimator)"
            )
        fitted = _params_of(cls, model)
        for k, v in params.items():
            if k not in _LOAD_OPTIONS and k in fitted and fitted[k] != v:
                raise ValueError(
                    f"{k}: the model was fitted with {fitted[k]!r}; only extension "
                    f"options ({', '.join(_LOAD_OPTIONS)}) can be set when loading"
                )
        est = cls(**{**fitted, **params})
        est._fitted(model, annotate=bool(params))
        est.n_features_in_ = model.input_width
        return est


def _frame(diag: dict, X, est):
    """The diagnostics as a DataFrame when ``set_output`` asks for pandas or polars
    (indexed like ``X`` when it is a DataFrame), else the dict."""
    if _get_output_config is None:
        return diag
    kind = _get_output_config("transform", est)["dense"]
    if kind == "pandas":
        import pandas as pd

        index = X.index if isinstance(X, pd.DataFrame) else None
        return pd.DataFrame(diag, index=index)
    if kind == "polars":
        import polars as pl

        return pl.DataFrame(diag)
    return diag


class OoseTransformerMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """``transform`` with optional diagnostics and ``fit_transform`` = the training
    embedding (the extension of the training points equals it to round-off).

    scikit-learn's output API: ``get_feature_names_out`` gives ``<class>0``,
    ``<class>1``, … (``kernelpca0``); ``set_output(transform="pandas")`` (or
    ``"polars"``, or ``sklearn.config_context(transform_output=...)``) makes
    ``transform`` and ``fit_transform`` return DataFrames, and the diagnostics a
    DataFrame with one column per diagnostic.
    """

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
            Also return the per-point diagnostics. Without them only the coordinates
            are computed (the same numbers, bit for bit): no novelty search and no
            residual, which on kernel PCA of 10000 Fashion-MNIST images makes
            ``transform`` about 6× faster.
        alpha : float in (0, 1), optional
            Level of ``is_novel``: a row is flagged when its novelty p-value is at most
            ``alpha``, so about a fraction ``alpha`` of rows drawn like the training
            data are flagged. Default: the model's (0.01).

        Returns
        -------
        coordinates : ndarray of shape (n_samples, n_components)
        diagnostics : dict of ndarray, only with ``return_diagnostics=True``
            One value per row: ``novelty`` (larger = less like the training data, in
            the data's units: the geometric mean, weights ⅔ and ⅓, of the mean
            distance to the 10 nearest training points and of how far the row's
            direction from the training mean is from those of the training points
            near it, each corrected for how spread the training data is there),
            ``novelty_pvalue``
            (conformal p-value against the training points' leave-one-out scores),
            ``is_novel`` (``novelty_pvalue <= alpha``), ``residual`` (k₀(z, z), the
            squared power function of the kernel), ``reconstruction_error`` and the
            method's own columns (the CLI's ``--diagnostics`` columns). See
            docs/diagnostics.md for what to threshold.
        """
        return self._transform(X, return_diagnostics, alpha)

    def _transform(self, X, return_diagnostics, alpha, **options):
        """``transform``'s body (subclasses with more options call it, so that
        scikit-learn's output wrapper applies once)."""
        coords, diag = self._extend(X, alpha, diagnostics=return_diagnostics, **options)
        if not return_diagnostics:
            return coords
        self._warn_unreachable(alpha)
        return coords, _frame(diag, X, self)

    def _warn_unreachable(self, alpha=None):
        """A ``NoveltyWarning`` where ``is_novel`` cannot be set at level ``alpha``
        (None: the model's): too few training points for it."""
        note = self.model_.unreachable_level(alpha)
        if note is not None:
            _warn(f"{type(self).__name__}: {note}", NoveltyWarning)

    def fit_transform(self, X, y=None):
        """Fits and returns the training embedding (one row per row of ``X``; rows left
        out of the fit, such as points outside Isomap's largest component, are
        extended)."""
        self.fit(X, y)
        if self.embedding_.shape[0] == len(self.model_.kept()) == _num_samples(X):
            return self.embedding_.copy()
        return self.transform(X)
