"""oose as a scikit-learn user meets it (issue 23), as a script a notebook would hold.

Run: python examples/python/sklearn_interface.py  (CI runs it: tests/python/test_examples.py)
"""

import io
import pickle

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import oose

# 1. pandas in, pandas out, through a Pipeline: columns named by get_feature_names_out,
#    the index of the input kept, the diagnostics a DataFrame with the same index.
X = oose.datasets.swiss_roll(1500, noise=0.05, random_state=0)
frame = pd.DataFrame(X, columns=["x", "y", "z"], index=[f"cell{i}" for i in range(len(X))])
train, new = frame.iloc[:1200], frame.iloc[1200:]
pipe = Pipeline([("scale", StandardScaler()), ("isomap", oose.Isomap(n_neighbors=10))])
pipe.set_output(transform="pandas").fit(train)
emb = pipe.transform(new)
print("Pipeline output:", type(emb).__name__, list(emb.columns), emb.index[0])
_, diag = pipe[-1].transform(pipe[:-1].transform(new), return_diagnostics=True)
print("diagnostics:", type(diag).__name__, list(diag.columns)[:4], "...")
assert list(emb.columns) == ["isomap0", "isomap1"] and emb.index.equals(new.index)
assert diag.index.equals(new.index)

# 2. save -> load -> clone: the hyperparameters survive, and so does the model.
est = oose.DiffusionMaps(n_neighbors=15, alpha=0.5, epsilon="log-slope").fit(X[:1200])
buf = io.BytesIO(est.to_bytes())
back = oose.from_bytes(buf.getvalue())
print("loaded params equal:", back.get_params() == est.get_params())
assert back.get_params() == est.get_params()
assert clone(back).get_params() == clone(est).get_params()
assert np.array_equal(back.transform(X[1200:]), est.transform(X[1200:]))
again = pickle.loads(pickle.dumps(back))
assert again.get_params() == est.get_params()
refit = clone(back).fit(X[:1200])
assert np.array_equal(refit.embedding_, est.embedding_)
print("clone of the loaded estimator refits the same embedding: True")

# 3. random_state as scikit-learn takes it; the seed used is recorded.
lmds = oose.LandmarkMDS(n_landmarks=50, landmarks="random", random_state=None).fit(X)
print("seed drawn for random_state=None:", lmds.seed_)

# 4. Clustered data with the defaults: three separated blobs make a disconnected
#    10-NN graph; spectral clustering finds the components as clusters (a FitWarning
#    says so), Isomap joins them as scikit-learn does.
import warnings

from sklearn.datasets import make_blobs

blobs, truth = make_blobs(
    n_samples=[100, 100, 100], centers=[[0, 0], [10, 10], [-10, 10]], cluster_std=0.5,
    random_state=0,
)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    sc = oose.SpectralClustering(n_clusters=3).fit(blobs)
counts = sorted(np.bincount(sc.labels_).tolist())
print("SpectralClustering labels per cluster:", counts, "| warning:", str(caught[0].message)[:60], "...")
assert counts == [100, 100, 100]
assert all(len(set(sc.labels_[truth == c])) == 1 for c in range(3))
