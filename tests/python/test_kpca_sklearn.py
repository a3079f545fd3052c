"""Kernel PCA agrees with scikit-learn's KernelPCA (rbf, dense solver), through the CLI."""
import numpy as np
from sklearn.decomposition import KernelPCA

from conftest import read_csv, sign_rule, swiss_roll


def rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def test_swiss_roll_500_train_200_new(tmp_path, run):
    x = swiss_roll(700, 0.05, seed=0)
    train, new = x[:500], x[500:]
    np.save(tmp_path / "train.npy", train)
    np.save(tmp_path / "new.npy", new)
    model = tmp_path / "m.oose"
    run("fit", "kpca", "--input", tmp_path / "train.npy", "--output", model, "--components", 5, "--solver", "dense")
    info = dict(line.split(": ", 1) for line in run("info", model).splitlines())
    eps = float(info["epsilon"])
    iu = np.triu_indices(500, 1)
    d2 = ((train[:, None, :] - train[None, :, :]) ** 2).sum(-1)[iu]
    assert eps == np.median(d2) or abs(eps - np.median(d2)) < 1e-12 * eps

    run("embedding", model, "--output", tmp_path / "emb.csv")
    run("extend", model, "--input", tmp_path / "new.npy", "--output", tmp_path / "ext.csv", "--diagnostics")
    _, emb = read_csv(tmp_path / "emb.csv")
    header, ext = read_csv(tmp_path / "ext.csv")
    assert header == ["c1", "c2", "c3", "c4", "c5", "residual", "reconstruction_error",
                      "novelty", "novelty_pvalue", "is_novel"]

    sk = KernelPCA(n_components=5, kernel="rbf", gamma=1.0 / eps, eigen_solver="dense")
    sk_emb = sk.fit_transform(train)
    sk_new = sk.transform(new)
    sk_new = sign_rule(sk_new, sk_emb)
    sk_emb = sign_rule(sk_emb, sk_emb)
    emb_s = sign_rule(emb, emb)
    ext_s = sign_rule(ext[:, :5], emb)
    assert rel(emb_s, sk_emb) < 1e-8, rel(emb_s, sk_emb)
    assert rel(ext_s, sk_new) < 1e-8, rel(ext_s, sk_new)
    np.testing.assert_allclose(np.array([float(v) for v in info["eigenvalues"].split(",")]),
                               sk.eigenvalues_, rtol=1e-9)
    # Diagnostics: 0 ≤ residual ≤ reconstruction error.
    res, rec = ext[:, 5], ext[:, 6]
    assert np.all(res >= 0) and np.all(res <= rec + 1e-10)


def test_residual_matches_schur_complement(tmp_path, run):
    """residual(z) = k(z,z) − k_zᵀ K⁻¹ k_z on a well-conditioned gaussian kernel."""
    rng = np.random.default_rng(3)
    train = rng.normal(size=(60, 2)) * 3
    new = rng.normal(size=(25, 2)) * 3
    np.savetxt(tmp_path / "train.csv", train, delimiter=",")
    np.savetxt(tmp_path / "new.csv", new, delimiter=",")
    model = tmp_path / "m.oose"
    run("fit", "kpca", "--input", tmp_path / "train.csv", "--output", model, "--epsilon", "0.5")
    run("extend", model, "--input", tmp_path / "new.csv", "--output", tmp_path / "e.csv", "--diagnostics")
    _, ext = read_csv(tmp_path / "e.csv")
    k = np.exp(-((train[:, None] - train[None]) ** 2).sum(-1) / 0.5)
    kz = np.exp(-((new[:, None] - train[None]) ** 2).sum(-1) / 0.5)
    want = 1.0 - np.einsum("ij,ij->i", kz, np.linalg.solve(k, kz.T).T)
    np.testing.assert_allclose(ext[:, 2], want, atol=1e-9)
