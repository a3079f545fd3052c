"""Isomap and classical MDS agree with scikit-learn, through the CLI."""
import numpy as np
from sklearn.decomposition import KernelPCA
from sklearn.manifold import Isomap

from conftest import read_csv, sign_rule, swiss_roll


def rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def test_isomap_swiss_roll_1000(tmp_path, run):
    x = swiss_roll(1200, 0.05, seed=4)
    train, new = x[:1000], x[1000:]
    np.save(tmp_path / "train.npy", train)
    np.save(tmp_path / "new.npy", new)
    model = tmp_path / "iso.oose"
    run("fit", "isomap", "--input", tmp_path / "train.npy", "--knn", 10, "--components", 2,
        "--solver", "dense", "--output", model)
    run("embedding", model, "--output", tmp_path / "emb.csv")
    run("extend", model, "--input", tmp_path / "new.npy", "--output", tmp_path / "ext.csv")
    _, emb = read_csv(tmp_path / "emb.csv")
    _, ext = read_csv(tmp_path / "ext.csv")

    sk = Isomap(n_neighbors=10, n_components=2, eigen_solver="dense")
    sk_emb = sk.fit_transform(train)
    sk_new = sign_rule(sk.transform(new), sk_emb)
    sk_emb = sign_rule(sk_emb, sk_emb)
    ext_s = sign_rule(ext, emb)
    emb_s = sign_rule(emb, emb)
    assert rel(emb_s, sk_emb) < 1e-8, rel(emb_s, sk_emb)
    assert rel(ext_s, sk_new) < 1e-8, rel(ext_s, sk_new)


def test_mds_projection_is_kernel_pca_of_minus_half_squared_distances(tmp_path, run):
    rng = np.random.default_rng(5)
    train = rng.normal(size=(150, 4)) * [5, 3, 1, 0.5]
    new = rng.normal(size=(30, 4)) * 2
    d2 = ((train[:, None] - train[None]) ** 2).sum(-1)
    a2 = ((new[:, None] - train[None]) ** 2).sum(-1)
    np.save(tmp_path / "d2.npy", d2)
    np.save(tmp_path / "a2.npy", a2)
    model = tmp_path / "mds.oose"
    run("fit", "mds", "--squared-dissimilarities", tmp_path / "d2.npy", "--components", 3,
        "--solver", "dense", "--output", model)
    run("embedding", model, "--output", tmp_path / "emb.csv")
    run("extend", model, "--input", tmp_path / "a2.npy", "--output", tmp_path / "ext.csv")
    _, emb = read_csv(tmp_path / "emb.csv")
    _, ext = read_csv(tmp_path / "ext.csv")
    sk = KernelPCA(n_components=3, kernel="precomputed", eigen_solver="dense")
    sk_emb = sk.fit_transform(-0.5 * d2)
    sk_new = sign_rule(sk.transform(-0.5 * a2), sk_emb)
    sk_emb = sign_rule(sk_emb, sk_emb)
    assert rel(sign_rule(emb, emb), sk_emb) < 1e-10
    assert rel(sign_rule(ext, emb), sk_new) < 1e-10
