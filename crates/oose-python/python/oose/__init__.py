"""oose — dimensionality reduction with out-of-sample extension.

Fit an embedding once, then place new points into it with ``transform`` — no refit, no
moving of old points — and get for every new point whether the training set represents
it (``transform(X, return_diagnostics=True)``: ``novelty``, a distance in the data's
units, its calibrated ``novelty_pvalue`` and ``is_novel`` at the level ``alpha`` you pass;
for the kernel methods also the residual k₀(z, z), the squared power function).
scikit-learn estimators over the Rust core:

- :class:`KernelPCA`, :class:`ClassicalMDS`, :class:`LandmarkMDS`, :class:`Isomap`,
  :class:`DiffusionMaps`, :class:`LaplacianEigenmaps`, :class:`LocallyLinearEmbedding`,
  :class:`MaximumVarianceUnfolding`, :class:`TSNE`, :class:`UMAP`,
  :class:`Autoencoder`, :class:`VariationalAutoencoder`
  (transformers; ``inverse_transform`` maps embedding coordinates back),
- :class:`SpectralClustering` (``predict`` for new points),
- :class:`KernelInterpolator` (``predict``, with the power function).

Fitted estimators pickle through the model file format, and ``save``/:func:`load` use
the files of the ``oose`` command line (with the constructor parameters).
:func:`plot` draws an extension (matplotlib). :mod:`oose.dask` extends Dask arrays block by
block on a cluster.
"""

from . import _oose, datasets
from ._autoencoders import Autoencoder, VariationalAutoencoder
from ._base import FitWarning, NoveltyWarning, OoseEstimator, _document_runtime, _load_model
from ._estimators import (
    ClassicalMDS,
    DiffusionMaps,
    Isomap,
    KernelInterpolator,
    KernelPCA,
    LandmarkMDS,
    LaplacianEigenmaps,
    SpectralClustering,
)
from ._neighbour_embeddings import (
    TSNE,
    UMAP,
    LocallyLinearEmbedding,
    MaximumVarianceUnfolding,
)
from ._plot import plot

__version__ = _oose.__version__

_ESTIMATORS = (
    KernelPCA,
    ClassicalMDS,
    LandmarkMDS,
    Isomap,
    DiffusionMaps,
    LaplacianEigenmaps,
    SpectralClustering,
    KernelInterpolator,
    LocallyLinearEmbedding,
    MaximumVarianceUnfolding,
    TSNE,
    UMAP,
    Autoencoder,
    VariationalAutoencoder,
)
_BY_METHOD = {m: cls for cls in _ESTIMATORS for m in getattr(cls, "_methods", (cls._method,))}
for _cls in _ESTIMATORS:
    _document_runtime(_cls)


def _class_of(model, where):
    cls = _BY_METHOD.get(model.method)
    if cls is None:
        raise ValueError(
            f"{where}: a {model.method} model has no Python estimator "
            f"(use the command line: oose extend)"
        )
    return cls


def load(path, **params):
    """The fitted estimator stored in a model file (written by ``save`` or by
    ``oose fit``), of the class that matches its method, with the constructor
    parameters it was fitted with (see :meth:`OoseEstimator.load`).

    Parameters
    ----------
    path : str or path-like
        The model file.
    **params
        Extension options to set (``strategy``, ``density``, ``on_isolated``,
        ``extension``, ``lowrank_tolerance``, ``n_jobs``, ``verbose``); a fit parameter
        is an error naming it.

    Returns
    -------
    estimator : OoseEstimator
        Fitted, of the class of the file's method.
    """
    return _class_of(_load_model(path), path).load(path, **params)


def from_bytes(data, **params):
    """The fitted estimator in ``data`` (the bytes of ``to_bytes``, of a model file
    written by ``save`` or by ``oose fit``), of the class that matches its method.

    Parameters
    ----------
    data : bytes-like
        The bytes of a model file.
    **params
        Extension options to set, as for :func:`load`.

    Returns
    -------
    estimator : OoseEstimator
        Fitted, of the class of the model's method.
    """
    model = _oose.Model.from_bytes(bytes(data))
    return _class_of(model, "the bytes").from_bytes(data, **params)


__all__ = [
    "Autoencoder",
    "ClassicalMDS",
    "DiffusionMaps",
    "FitWarning",
    "Isomap",
    "KernelInterpolator",
    "KernelPCA",
    "LandmarkMDS",
    "LaplacianEigenmaps",
    "LocallyLinearEmbedding",
    "MaximumVarianceUnfolding",
    "NoveltyWarning",
    "TSNE",
    "UMAP",
    "VariationalAutoencoder",
    "OoseEstimator",
    "SpectralClustering",
    "datasets",
    "from_bytes",
    "load",
    "plot",
]
