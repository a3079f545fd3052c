"""Single-cell reference mapping (oose.anndata) on scanpy's shipped pbmc68k_reduced:
real cells, no download at test time (scripts/test extracts the .h5ad from scanpy's
wheel into .venv/data and sets OOSE_PBMC)."""

import os
import warnings

import numpy as np
import pytest

import oose
import oose.anndata as oa

ad = pytest.importorskip("anndata")

PATH = os.environ.get("OOSE_PBMC")
if PATH is None:
    pytest.skip(
        "OOSE_PBMC is not set: scripts/test fetches pbmc68k_reduced.h5ad and sets it",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def pbmc():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anndata's notes on the file's old layout
        a = ad.read_h5ad(PATH)
    query = np.zeros(a.n_obs, bool)
    query[::5] = True
    return a, query


def test_map_query_transfers_labels_and_round_trips_through_h5ad(pbmc, tmp_path):
    a, q = pbmc
    ref, query = a[~q].copy(), a[q].copy()
    truth = query.obs["bulk_labels"].astype(str).to_numpy()
    est = oa.fit_reference(ref, "umap", n_neighbors=15)
    assert isinstance(est, oose.UMAP) and ref.obsm["X_oose"].shape == (560, 2)
    oa.map_query(query, ref, label_key="bulk_labels")
    assert query.obsm["X_oose"].shape == (140, 2)
    acc = (query.obs["bulk_labels"].astype(str).to_numpy() == truth).mean()
    # bulk_labels are noisy (scanpy's ingest reaches the same level); measured 0.764.
    assert acc > 0.70, acc
    conf = query.obs["bulk_labels_confidence"].to_numpy()
    assert ((conf > 0) & (conf <= 1)).all()
    # Confident transfers are more often right than unsure ones.
    right = query.obs["bulk_labels"].astype(str).to_numpy() == truth
    assert right[conf >= 0.8].mean() > right[conf < 0.8].mean()
    # Query cells like the reference: about alpha = 1 % flagged as novel.
    assert query.obs["oose_is_novel"].mean() < 0.05
    assert query.obs["oose_novelty_pvalue"].between(0, 1).all()
    # The reference written to .h5ad and read back maps the same bits.
    path = tmp_path / "ref.h5ad"
    ref.write_h5ad(path)
    back = ad.read_h5ad(path)
    again = oa.map_query(a[q].copy(), back, label_key="bulk_labels")
    np.testing.assert_array_equal(again.obsm["X_oose"], query.obsm["X_oose"])
    assert (again.obs["bulk_labels"] == query.obs["bulk_labels"]).all()
    # The stored estimator keeps its parameters.
    assert oose.from_bytes(back.uns["oose"]["model"].tobytes()).get_params() == est.get_params()
    # Reference cells mapped as queries land where the fit put them (round-off of the
    # projection aside).
    self_mapped = oa.map_query(ref.copy(), ref)
    assert np.abs(self_mapped.obsm["X_oose"] - ref.obsm["X_oose"]).max() < 1e-9


def test_a_cell_type_missing_from_the_reference_scores_as_novel(pbmc):
    """NK cells held out of the reference: their novelty ranks above the other query
    cells' (measured AUROC 0.984, 4 of 7 flagged at alpha = 0.01 against 0 of 133)."""
    from sklearn.metrics import roc_auc_score

    a, q = pbmc
    held = (a.obs["bulk_labels"] == "CD56+ NK").to_numpy()
    ref, query = a[~held & ~q].copy(), a[q].copy()
    oa.fit_reference(ref, "umap")
    oa.map_query(query, ref)
    y = (query.obs["bulk_labels"] == "CD56+ NK").to_numpy()
    assert roc_auc_score(y, query.obs["oose_novelty"]) > 0.9
    assert query.obs["oose_is_novel"][y].mean() > query.obs["oose_is_novel"][~y].mean()


@pytest.mark.parametrize("method", ["isomap", "TSNE", oose.DiffusionMaps])
def test_any_method_maps(pbmc, method):
    a, q = pbmc
    ref, query = a[~q].copy(), a[q].copy()
    oa.fit_reference(ref, method)
    oa.map_query(query, ref, label_key="bulk_labels")
    acc = (query.obs["bulk_labels"].astype(str).to_numpy()
           == a[q].obs["bulk_labels"].astype(str).to_numpy()).mean()
    assert acc > 0.6, acc


def test_errors_name_the_culprit(pbmc):
    a, q = pbmc
    ref = a[~q].copy()
    with pytest.raises(ValueError, match="no oose fit"):
        oa.map_query(a[q].copy(), ref)
    with pytest.raises(ValueError, match="method: expected one of"):
        oa.fit_reference(ref, "nope")
    oa.fit_reference(ref, "isomap")
    with pytest.raises(ValueError, match="of the reference's 309 PCA genes are not in"):
        oa.map_query(a[q][:, :100].copy(), ref)
    with pytest.raises(ValueError, match="label_key: ref.obs has no column"):
        oa.map_query(a[q].copy(), ref, label_key="cell_type")


def test_missing_labels_and_an_empty_query(pbmc):
    a, q = pbmc
    ref = a[~q].copy()
    oa.fit_reference(ref, "isomap")
    full = oa.map_query(a[q].copy(), ref, label_key="bulk_labels")
    # The ten reference cells nearest to the first query cell lose their label: that
    # cell gets none (missing, confidence 0), not the first category.
    near = np.argsort(((ref.obsm["X_oose"] - full.obsm["X_oose"][0]) ** 2).sum(axis=1))[:10]
    ref.obs["lab"] = ref.obs["bulk_labels"].astype(object)
    ref.obs.loc[ref.obs_names[near], "lab"] = np.nan
    part = oa.map_query(a[q].copy(), ref, label_key="lab")
    assert part.obs["lab"].isna().iloc[0] and part.obs["lab_confidence"].iloc[0] == 0.0
    assert part.obs["lab"].notna().sum() > 0.9 * part.n_obs
    ref.obs["none"] = np.nan
    with pytest.raises(ValueError, match=r"ref.obs\['none'\] has no labels"):
        oa.map_query(a[q].copy(), ref, label_key="none")
    with pytest.raises(ValueError, match="n_neighbors: must be at least 1"):
        oa.map_query(a[q].copy(), ref, label_key="bulk_labels", n_neighbors=0)
    empty = oa.map_query(a[q][:0].copy(), ref, label_key="bulk_labels")
    assert empty.obsm["X_oose"].shape == (0, full.obsm["X_oose"].shape[1])
    assert {"oose_novelty", "oose_is_novel", "bulk_labels"} <= set(empty.obs.columns)
