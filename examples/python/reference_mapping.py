"""Single-cell reference mapping with oose.anndata on scanpy's pbmc68k_reduced (issue
23), as a script a notebook would hold: fit UMAP on a reference, map query cells with
label transfer and per-cell novelty, round-trip the reference through .h5ad.

Run: OOSE_PBMC=path/to/pbmc68k_reduced.h5ad python examples/python/reference_mapping.py
(scripts/test extracts the file from scanpy's wheel and sets OOSE_PBMC; CI runs this.)
"""

import os
import tempfile
import time
import warnings

import anndata as ad
import numpy as np

import oose.anndata as oa

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    cells = ad.read_h5ad(os.environ["OOSE_PBMC"])
query_mask = np.zeros(cells.n_obs, bool)
query_mask[::5] = True
ref, query = cells[~query_mask].copy(), cells[query_mask].copy()
truth = query.obs["bulk_labels"].astype(str).to_numpy()

t = time.perf_counter()
oa.fit_reference(ref, "umap", use_rep="X_pca")
fit_s = time.perf_counter() - t
oa.map_query(query.copy(), ref, label_key="bulk_labels")  # first call: imports, indexes
t = time.perf_counter()
oa.map_query(query, ref, label_key="bulk_labels")
map_s = time.perf_counter() - t
acc = (query.obs["bulk_labels"].astype(str).to_numpy() == truth).mean()
print(f"reference {ref.n_obs} cells: UMAP fit {fit_s:.2f} s; {query.n_obs} query cells mapped "
      f"in {1000 * map_s:.1f} ms; label transfer accuracy {acc:.3f}; "
      f"{int(query.obs['oose_is_novel'].sum())} flagged as novel")
assert acc > 0.7

# A cell type the reference lacks: NK cells held out of it.
nk = (cells.obs["bulk_labels"] == "CD56+ NK").to_numpy()
ref2, query2 = cells[~nk & ~query_mask].copy(), cells[query_mask].copy()
oa.fit_reference(ref2, "umap")
oa.map_query(query2, ref2)
is_nk = (query2.obs["bulk_labels"] == "CD56+ NK").to_numpy()
print(f"NK cells held out of the reference: median novelty p-value {np.median(query2.obs['oose_novelty_pvalue'][is_nk]):.4f} "
      f"(other cells {np.median(query2.obs['oose_novelty_pvalue'][~is_nk]):.3f}); "
      f"flagged {int(query2.obs['oose_is_novel'][is_nk].sum())} of {is_nk.sum()} NK, "
      f"{int(query2.obs['oose_is_novel'][~is_nk].sum())} of {(~is_nk).sum()} others")

# The reference carries its model: write, read, map again, same coordinates.
with tempfile.TemporaryDirectory() as d:
    ref.write_h5ad(os.path.join(d, "ref.h5ad"))
    back = ad.read_h5ad(os.path.join(d, "ref.h5ad"))
again = oa.map_query(cells[query_mask].copy(), back)
assert np.array_equal(again.obsm["X_oose"], query.obsm["X_oose"])
print("reference read back from .h5ad maps the same coordinates: True")
