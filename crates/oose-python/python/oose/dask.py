"""Out-of-sample extension of Dask arrays, block by block on the workers, and kernel
PCA's Nyström fit as a reduction over a Dask array's blocks (:func:`fit_kernel_pca`).

Extension is sample-wise, so a Dask array of new points is extended one row block at a
time, each block where it lives, and the result is a Dask array with the same row
blocks. The fitted estimator enters the task graph once, as one key that every block
task depends on: it is serialised once (through the model file format) and moved to each
worker once, not once per block.

Example
-------
>>> import dask.array as da
>>> from dask.distributed import Client, LocalCluster
>>> import oose, oose.dask
>>> X = oose.datasets.swiss_roll(2000, random_state=0)
>>> est = oose.KernelPCA(n_components=2).fit(X)
>>> Z = da.from_array(oose.datasets.swiss_roll(100_000, random_state=1), chunks=(10_000, 3))
>>> with LocalCluster(n_workers=2, processes=True) as cluster, Client(cluster):
...     Y = oose.dask.transform(est, Z).compute()          # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["fit_kernel_pca", "transform"]


def _extend_block(estimator, block, d, names, return_diagnostics):
    """One block: coordinates (``d`` columns), then the diagnostic columns in ``names``
    order. A block without rows (boolean indexing leaves some) gives none."""
    if np.shape(block)[0] == 0:
        return np.empty((0, d + (len(names) if return_diagnostics else 0)))
    coords, diag = estimator._extend(block)
    if not return_diagnostics:
        return coords
    cols = [coords] + [np.asarray(diag[n], dtype=np.float64)[:, None] for n in names]
    return np.hstack(cols)


def transform(estimator, X, *, return_diagnostics=False):
    """Extends the rows of the 2-D Dask array ``X`` with a fitted oose estimator.

    Returns a Dask array (M×d) with ``X``'s row chunks — lazily; ``.compute()`` runs it,
    on a ``dask.distributed`` cluster if a client is active. The result equals
    ``estimator.transform(X.compute())`` exactly (the same Rust code runs on each
    block; rows do not depend on each other).

    With ``return_diagnostics=True`` returns ``(coordinates, diagnostics)``, the
    diagnostics a dict of 1-D Dask arrays (the names ``transform`` returns; one pass
    over ``X`` computes all of them when computed together with ``dask.compute``).

    Blocks may be empty or of unknown size (as after boolean indexing). Batch-coupled
    extension (``density="union"`` of diffusion maps) cannot run block by block and is
    refused. For :class:`oose.KernelInterpolator` the "coordinates" are the
    predicted values (N×m) and the power function is a diagnostic.

    Parameters
    ----------
    estimator : OoseEstimator
        A fitted oose estimator.
    X : dask.array.Array of shape (n_samples, n_features)
        The new points, chunked by rows.
    return_diagnostics : bool, default=False
        Also return the diagnostics, a dict of 1-D Dask arrays.

    Returns
    -------
    coordinates : dask.array.Array of shape (n_samples, n_components)
    diagnostics : dict of dask.array.Array, only with ``return_diagnostics=True``
    """
    import dask
    import dask.array as da

    check_is_fitted(estimator, "model_")
    if getattr(estimator, "density", "training") == "union":
        raise ValueError(
            "density='union' couples the rows of a batch: it cannot be extended block by "
            "block; use density='training' (exact, sample-wise) or transform the whole batch"
        )
    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D Dask array, got {X.ndim} dimension(s)")
    width = estimator.n_features_in_
    if X.shape[1] != width:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{width} features as input"
        )
    X = X.rechunk({1: -1})
    d = estimator.model_.n_components
    names = []
    if return_diagnostics:
        estimator._warn_unreachable()
        # The names (and their order) from one row, extended here: the first row of
        # the first block that has one (block sizes can be unknown, as after boolean
        # indexing, or zero).
        for block in X.to_delayed().ravel():
            first = np.asarray(block.compute(), dtype=np.float64)[:1]
            if first.shape[0]:
                names = list(estimator._extend(first)[1].keys())
                break
    ncols = d + len(names)

    est = dask.delayed(estimator, pure=True, traverse=False)
    blocks = X.to_delayed().ravel()
    parts = [
        da.from_delayed(
            dask.delayed(_extend_block, pure=True)(est, b, d, names, return_diagnostics),
            shape=(rows, ncols),
            dtype=np.float64,
            meta=np.empty((0, ncols), dtype=np.float64),
        )
        for b, rows in zip(blocks, X.chunks[0])
    ]
    out = da.concatenate(parts, axis=0) if parts else da.empty((0, ncols), chunks=(0, ncols))
    if not return_diagnostics:
        return out
    coords = out[:, :d]
    diag = {n: out[:, d + i] for i, n in enumerate(names)}
    return coords, diag


def _block_sums(plan, block):
    """One block's Nyström sums (in the plan's blocks of rows, as on one machine)."""
    from ._nystrom import add_sums, checked

    return add_sums(plan, plan.empty_sums(), checked(block, None, "block"))


def _embed_block(fit, block):
    """One block's training coordinates."""
    from ._nystrom import checked

    return fit.embed(checked(block, None, "block"))


def fit_kernel_pca(estimator, X):
    """Fits ``estimator`` (a :class:`oose.KernelPCA` with ``n_landmarks``) through
    landmarks on the rows of the 2-D Dask array ``X``, on the cluster (maths §21).

    A uniform sample of ``landmark_sample`` rows comes to the client, which chooses the
    landmarks (the plan); every block's sums (one r×r matrix and an r-vector) are
    computed where the block lives, with the plan sent to each worker once; the client
    adds them in block order and solves the r×r eigenproblem. The model equals
    ``estimator.fit(X.compute())`` to rounding (the same sums in another grouping:
    1e-12 relative), and no worker ever holds more than a block and the plan.

    Empty blocks add nothing. Blocks of unknown size (as after boolean indexing) are
    refused: the sample needs the number of rows; ``X.compute_chunk_sizes()`` gives it.

    Returns the training embedding as a lazy Dask array with ``X``'s row chunks (the
    coordinates of :func:`transform`, without its diagnostics); the estimator is fitted
    in place (its ``embedding_`` is empty, 0×d: the embedding is the returned array).

    Parameters
    ----------
    estimator : oose.KernelPCA
        An estimator with ``n_landmarks`` set (fitted in place).
    X : dask.array.Array of shape (n_samples, n_features)
        The training points, chunked by rows.

    Returns
    -------
    embedding : dask.array.Array of shape (n_samples, n_components)

    Examples
    --------
    >>> import dask.array as da
    >>> import oose, oose.dask
    >>> X = da.from_array(oose.datasets.swiss_roll(20_000, random_state=0), chunks=(5_000, 3))
    >>> est = oose.KernelPCA(n_components=2, n_landmarks=200)
    >>> Y = oose.dask.fit_kernel_pca(est, X)
    >>> Y.shape, est.info_["n_landmarks"] <= 200
    ((20000, 2), True)
    """
    import dask
    import dask.array as da

    from . import _oose
    from ._nystrom import nystrom_params

    params = nystrom_params(estimator)
    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D Dask array, got {X.ndim} dimension(s)")
    n, width = X.shape
    if np.isnan(n):
        raise ValueError(
            "X: its row chunk sizes are unknown (as after boolean indexing); the fit needs "
            "the number of rows to draw its sample: call X.compute_chunk_sizes() first"
        )
    if n < 2 or width < 1:
        raise ValueError(f"X: need at least 2 rows and 1 column, got shape {X.shape}")
    X = X.rechunk({1: -1})
    rows = _oose.NystromPlan.sample_rows(params, n)
    sample = np.require(X[np.asarray(rows)].compute(), np.float64, ["C_CONTIGUOUS", "ALIGNED"])
    plan = _oose.NystromPlan(params, sample, rows, n)
    key = dask.delayed(plan, pure=True, traverse=False)
    parts = dask.compute(*[dask.delayed(_block_sums, pure=True)(key, b) for b in X.to_delayed().ravel()])
    sums = plan.empty_sums()
    for p in parts:
        sums.add(p)
    fit = plan.finish(sums, sample)
    estimator._fitted(fit.model())
    estimator.n_features_in_ = width
    # Coordinates alone (no diagnostics, no novelty search), the fit sent once.
    d = estimator.model_.n_components
    key = dask.delayed(fit, pure=True, traverse=False)
    parts = [
        da.from_delayed(
            dask.delayed(_embed_block, pure=True)(key, b),
            shape=(rows, d),
            dtype=np.float64,
            meta=np.empty((0, d), dtype=np.float64),
        )
        for b, rows in zip(X.to_delayed().ravel(), X.chunks[0])
    ]
    return da.concatenate(parts, axis=0)
