#!/usr/bin/env bash
# Reference mapping on scanpy's pbmc68k_reduced (issue 23, docs/python.md): oose.anndata
# (UMAP fit on the reference, map_query with label transfer) against scanpy's
# sc.tl.ingest (UMAP of the reference, ingest of the query with obs="bulk_labels"), the
# same split (every fifth cell a query). Prints label-transfer accuracy and the time of
# the mapping call (scanpy: first call, with numba's compilation, and a second call).
# Environments: .venv-anndata (oose built in release by maturin, anndata) and
# .venv-scanpy (scanpy), both created here.
. "$(dirname "$0")/common.sh"
oose_env .venv-anndata anndata scikit-learn pandas
if [ ! -x .venv-scanpy/bin/python ]; then
  python3 -m venv .venv-scanpy
  .venv-scanpy/bin/pip install -q scanpy
fi
# scanpy 1.11's ingest rebuilds pynndescent's search forest through a private
# function whose signature pynndescent 0.7 changed: pin the series it was written for.
.venv-scanpy/bin/pip install -q "pynndescent<0.7"
.venv-scanpy/bin/python - "$tmp" <<'PYEOF'
import sys, time, warnings, shutil
warnings.simplefilter("ignore")
import numpy as np, scanpy as sc
from importlib.resources import files
shutil.copy(files("scanpy.datasets") / "10x_pbmc68k_reduced.h5ad", f"{sys.argv[1]}/pbmc.h5ad")
a = sc.datasets.pbmc68k_reduced()
q = np.zeros(a.n_obs, bool); q[::5] = True
ref, query = a[~q].copy(), a[q].copy()
truth = query.obs["bulk_labels"].astype(str).to_numpy()
# The shipped file's .uns["pca"] has no "params", which ingest reads: its PCA is
# zero-centred over the 309 highly variable genes (the other rows of .varm["PCs"] are
# NaN), as oose.anndata finds from the loadings.
ref.uns["pca"]["params"] = {"zero_center": True, "use_highly_variable": True}
sc.pp.neighbors(ref, n_neighbors=15, random_state=0)
sc.tl.umap(ref, random_state=0)
times = []
for _ in range(2):
    qq = query.copy()
    t = time.perf_counter(); sc.tl.ingest(qq, ref, obs="bulk_labels"); times.append(time.perf_counter() - t)
acc = (qq.obs["bulk_labels"].astype(str).to_numpy() == truth).mean()
print(f"| scanpy {sc.__version__} sc.tl.ingest | {acc:.3f} | {times[0]:.3f} s (first) / {times[1]:.3f} s |")
PYEOF
.venv-anndata/bin/python - "$tmp" <<'PYEOF'
import sys, time, warnings
warnings.simplefilter("ignore")
import anndata as ad, numpy as np, oose, oose.anndata as oa
a = ad.read_h5ad(f"{sys.argv[1]}/pbmc.h5ad")
q = np.zeros(a.n_obs, bool); q[::5] = True
ref, query = a[~q].copy(), a[q].copy()
truth = query.obs["bulk_labels"].astype(str).to_numpy()
oa.fit_reference(ref, "umap", n_neighbors=15)
times = []
for _ in range(2):
    qq = query.copy()
    t = time.perf_counter(); oa.map_query(qq, ref, label_key="bulk_labels"); times.append(time.perf_counter() - t)
acc = (qq.obs["bulk_labels"].astype(str).to_numpy() == truth).mean()
print(f"| oose {oose.__version__} oose.anndata.map_query | {acc:.3f} | {times[0]:.3f} s (first) / {times[1]:.3f} s |")
PYEOF
