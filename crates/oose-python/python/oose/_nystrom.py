"""Kernel PCA's Nyström fit orchestrated in Python (maths §21): a sample, a plan (the
landmarks and their factor), the sums of every chunk added in order, the model, and the
embedding of every chunk. ``KernelPCA.fit_chunks`` runs it over an iterable of arrays;
``oose.dask.fit_kernel_pca`` runs the same steps over a Dask array's blocks."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_array

from . import _oose


def nystrom_params(est) -> dict:
    """The core's parameters of ``est``'s Nyström fit (``n_landmarks`` must be set)."""
    if est.n_landmarks is None:
        raise ValueError(
            "n_landmarks: a fit in chunks is the Nyström fit; set n_landmarks (the number "
            "of landmarks, e.g. 500)"
        )
    return est._core_params()


def checked(chunk, width, what="chunk"):
    """A chunk as a C-contiguous float64 2-D array of ``width`` columns (any width
    when ``width`` is None). An empty chunk is allowed: it adds nothing (a Dask array
    can have zero-length blocks)."""
    c = check_array(chunk, dtype=np.float64, order="C", input_name=what, ensure_min_samples=0)
    # Arrays rebuilt from network frames (Dask workers) can be unaligned.
    c = np.require(c, np.float64, ["C_CONTIGUOUS", "ALIGNED"])
    if width is not None and c.shape[1] != width:
        raise ValueError(f"{what}: {c.shape[1]} columns, {width} in the first chunk")
    return c


def add_sums(plan, sums, chunk):
    """Adds the sums of ``chunk`` to ``sums`` (the core sums blocks of the plan's
    ``chunk_rows`` rows in parallel and adds them in order)."""
    sums.add(plan.sums(chunk))
    return sums


def fit_chunks(est, chunks):
    """``KernelPCA.fit_chunks``: see its docstring."""
    params = nystrom_params(est)
    if callable(chunks):
        fresh = chunks
    else:
        if iter(chunks) is chunks:
            raise ValueError(
                "chunks: an iterator can be read only once and the fit reads the chunks "
                "three times; pass a list, or a callable that returns a fresh iterator"
            )
        fresh = lambda: iter(chunks)  # noqa: E731
    n, width = 0, None
    for c in fresh():
        width = checked(c, width).shape[1] if width is None else width
        n += np.shape(c)[0]
    if width is None or n < 2:
        raise ValueError(f"chunks: need at least 2 rows in all, got {n}")
    rows = np.asarray(_oose.NystromPlan.sample_rows(params, n), dtype=np.int64)
    sample = np.empty((rows.size, width))
    start, k = 0, 0
    for c in fresh():
        c = checked(c, width)
        stop = start + c.shape[0]
        j = np.searchsorted(rows, stop)
        sample[k:j] = c[rows[k:j] - start]
        k, start = j, stop
    plan = _oose.NystromPlan(params, sample, rows.tolist(), n)
    sums = plan.empty_sums()
    for c in fresh():
        add_sums(plan, sums, checked(c, width))
    fit = plan.finish(sums, sample)
    est._fitted(fit.model())
    est.n_features_in_ = width
    # Coordinates alone: the training rows need no diagnostics nor novelty search.
    est.embedding_ = np.vstack([fit.embed(checked(c, width)) for c in fresh()])
    return est
