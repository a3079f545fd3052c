"""Single-cell reference mapping on AnnData objects (optional extra: ``pip install
oose[anndata]``; anndata is its only dependency).

Fit any oose method on a reference once, store it in the reference AnnData (so that
``.h5ad`` files carry it), then map query cells into the reference embedding without
refitting: coordinates in ``.obsm``, per-cell novelty (is this cell type in the
reference?) in ``.obs``, and labels transferred from the reference's nearest cells.

The representation is projected the same way for reference and query cells: for
``use_rep="X_pca"``, the centred expression of the genes that have PCA loadings
(``.varm["PCs"]``, scanpy's) times those loadings, with the reference's gene means
(scanpy does not store them; oose does). A reference cell mapped as a query therefore
lands exactly where the fit put it.
"""

from __future__ import annotations

import numpy as np

from ._base import OoseEstimator

#: Where the fit is stored in the reference: ``.uns[KEY]`` (model bytes, method,
#: representation), ``.var[KEY + "_mean"]`` and ``.varm[KEY + "_PCs"]``.
KEY = "oose"


def _dense(x) -> np.ndarray:
    if hasattr(x, "toarray"):
        x = x.toarray()
    return np.asarray(x, dtype=np.float64)


def _estimator_class(method):
    from . import _BY_METHOD, _ESTIMATORS

    if isinstance(method, str):
        by_name = {cls.__name__.lower(): cls for cls in _ESTIMATORS}
        cls = _BY_METHOD.get(method) or by_name.get(method.lower())
        if cls is None:
            names = sorted(set(_BY_METHOD) | set(by_name))
            raise ValueError(f"method: expected one of {', '.join(names)}, got {method!r}")
        return cls
    if isinstance(method, type) and issubclass(method, OoseEstimator):
        return method
    raise ValueError(f"method: expected a method name or an oose estimator class, got {method!r}")


def _projection(ref, use_rep):
    """(genes, mean, loadings) of the projection of ``use_rep``, or None when the
    representation is read as is (``X``, or an ``.obsm`` key without loadings)."""
    if use_rep != "X_pca":
        return None
    if "PCs" not in ref.varm:
        raise ValueError(
            "use_rep='X_pca' needs the PCA loadings in ref.varm['PCs'] (scanpy's "
            "sc.pp.pca stores them) to project query cells the same way"
        )
    loadings = np.asarray(ref.varm["PCs"], dtype=np.float64)
    genes = np.flatnonzero(np.isfinite(loadings).all(axis=1) & (np.abs(loadings).sum(axis=1) > 0))
    x = _dense(ref.X[:, genes])
    return genes, x.mean(axis=0), loadings[genes]


def _represent(adata, ref, use_rep, genes_mean_loadings, what):
    if use_rep == "X":
        return _dense(adata.X)
    if genes_mean_loadings is None:
        if use_rep not in adata.obsm:
            raise ValueError(f"{what}: no .obsm[{use_rep!r}] (the representation the reference was fitted on)")
        return np.asarray(adata.obsm[use_rep], dtype=np.float64)
    genes, mean, loadings = genes_mean_loadings
    names = ref.var_names[genes]
    missing = ~names.isin(adata.var_names)
    if missing.any():
        raise ValueError(
            f"{what}: {int(missing.sum())} of the reference's {len(names)} PCA genes are "
            f"not in its var_names (first: {names[missing][0]!r})"
        )
    idx = adata.var_names.get_indexer(names)
    return (_dense(adata.X[:, idx]) - mean) @ loadings


def fit_reference(ref, method="umap", use_rep="X_pca", **params):
    """Fits ``method`` on the reference cells and stores it in ``ref``.

    Parameters
    ----------
    ref : anndata.AnnData
        The reference cells.
    method : str or oose estimator class, default="umap"
        A method name (``umap``, ``tsne``, ``isomap``, ``dmaps``, … or the class name,
        ``"UMAP"``) or an estimator class.
    use_rep : str, default="X_pca"
        The representation fitted on: ``"X_pca"`` (projected with ``.varm["PCs"]`` and
        the reference's gene means, so query cells are projected the same way),
        ``"X"``, or another ``.obsm`` key (query cells must then carry it too).
    **params
        Constructor parameters of the estimator (``n_neighbors=15``, …).

    Returns
    -------
    estimator : the fitted oose estimator. ``ref`` gains ``.obsm["X_oose"]`` (the
    embedding), ``.uns["oose"]`` (model bytes in the model file format with the
    parameters, method, representation), and for ``X_pca`` ``.var["oose_mean"]`` and
    ``.varm["oose_PCs"]``; written to ``.h5ad``, they come back with it.
    """
    cls = _estimator_class(method)
    proj = _projection(ref, use_rep)
    rep = _represent(ref, ref, use_rep, proj, "ref")
    est = cls(**params).fit(rep)
    ref.obsm["X_oose"] = np.asarray(est.embedding_)
    ref.uns[KEY] = {
        "model": np.frombuffer(est.to_bytes(), dtype=np.uint8),
        "method": est._method,
        "use_rep": use_rep,
    }
    if proj is not None:
        genes, mean, loadings = proj
        full_mean = np.zeros(ref.n_vars)
        full_mean[genes] = mean
        full_loadings = np.zeros((ref.n_vars, loadings.shape[1]))
        full_loadings[genes] = loadings
        ref.var[KEY + "_mean"] = full_mean
        ref.varm[KEY + "_PCs"] = full_loadings
    return est


def _stored(ref):
    from . import from_bytes

    if KEY not in ref.uns:
        raise ValueError("ref: no oose fit in ref.uns['oose'] (call oose.anndata.fit_reference first)")
    uns = ref.uns[KEY]
    est = from_bytes(np.asarray(uns["model"], dtype=np.uint8).tobytes())
    use_rep = str(uns["use_rep"])
    proj = None
    if use_rep == "X_pca":
        loadings = np.asarray(ref.varm[KEY + "_PCs"], dtype=np.float64)
        genes = np.flatnonzero(np.abs(loadings).sum(axis=1) > 0)
        proj = genes, np.asarray(ref.var[KEY + "_mean"], dtype=np.float64)[genes], loadings[genes]
    return est, use_rep, proj


def map_query(query, ref, label_key=None, *, n_neighbors=10, alpha=None):
    """Maps the query cells into the reference embedding stored by
    :func:`fit_reference` (no refit; each cell on its own).

    Parameters
    ----------
    query : anndata.AnnData
        The cells to map: the reference's genes (matched by name, any order) for
        ``X_pca``, or the reference's representation.
    ref : anndata.AnnData
        A reference that went through :func:`fit_reference` (or was read back from the
        ``.h5ad`` it was written to).
    label_key : str, optional
        A column of ``ref.obs`` to transfer: each query cell gets the majority label of
        its ``n_neighbors`` nearest reference cells in the embedding, in
        ``query.obs[label_key]``, and the fraction of them that carry it in
        ``query.obs[label_key + "_confidence"]``. Reference cells without a label
        (missing) do not vote; a cell whose voters all lack one gets none
        (missing, confidence 0).
    n_neighbors : int, default=10
        Reference cells that vote for a label.
    alpha : float, optional
        Level of ``oose_is_novel`` (default: the model's, 0.01).

    Returns
    -------
    query : the same AnnData, with ``.obsm["X_oose"]`` (coordinates) and
    ``.obs["oose_novelty"]``, ``["oose_novelty_pvalue"]`` (small: the reference does not
    represent the cell, e.g. a cell type it lacks) and ``["oose_is_novel"]``. A query
    without cells gets these columns, empty.
    """
    est, use_rep, proj = _stored(ref)
    rep = _represent(query, ref, use_rep, proj, "query")
    if rep.shape[0] == 0:
        # No cells: the columns, empty (the estimators refuse an empty batch).
        coords = np.empty((0, est.model_.n_components))
        diag = {"novelty": [], "novelty_pvalue": [], "is_novel": np.array([], bool)}
    else:
        coords, diag = est.transform(rep, return_diagnostics=True, alpha=alpha)
    coords = np.asarray(coords)
    query.obsm["X_oose"] = coords
    for k in ("novelty", "novelty_pvalue", "is_novel"):
        query.obs["oose_" + k] = np.asarray(diag[k])
    if label_key is not None:
        _transfer(query, ref, coords, label_key, n_neighbors)
    return query


def _transfer(query, ref, coords, label_key, n_neighbors):
    import pandas as pd
    from sklearn.neighbors import NearestNeighbors

    if label_key not in ref.obs:
        raise ValueError(f"label_key: ref.obs has no column {label_key!r}")
    labels = pd.Categorical(ref.obs[label_key])
    if len(labels.categories) == 0:
        raise ValueError(f"label_key: ref.obs[{label_key!r}] has no labels (all missing)")
    if int(n_neighbors) < 1:
        raise ValueError(f"n_neighbors: must be at least 1, got {n_neighbors}")
    k = min(int(n_neighbors), ref.n_obs)
    counts = np.zeros((coords.shape[0], len(labels.categories)), dtype=np.int64)
    if coords.shape[0]:
        nn = NearestNeighbors(n_neighbors=k).fit(np.asarray(ref.obsm["X_oose"]))
        codes = labels.codes[nn.kneighbors(coords, return_distance=False)]
        for c in range(len(labels.categories)):
            counts[:, c] = (codes == c).sum(axis=1)
    # A cell whose k neighbours all lack a label gets none (missing), confidence 0.
    best = np.where(counts.max(axis=1) > 0, counts.argmax(axis=1), -1)
    query.obs[label_key] = pd.Categorical.from_codes(best, categories=labels.categories)
    query.obs[label_key + "_confidence"] = counts.max(axis=1) / k
