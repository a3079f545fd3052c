"""oose diffusion maps against datafold's DiffusionMaps (dense gaussian kernel, no
cut-off, same ε and α), through the `oose` binary.

Mapping between the two (documented in the README):
* datafold's GaussianKernel is exp(-D / (2 ε_df)) with D the squared distance, ours is
  exp(-D / ε): ε_df = ε / 2.
* Both diagonalise the same α-normalised Markov matrix, so the eigenvalues agree.
* datafold's eigenvectors are the Markov matrix's right eigenvectors scaled to unit
  Euclidean norm; ours (`diffusion` coordinates) are ψ_j/ψ₀, unit norm in the stationary
  measure. So each coordinate differs by one constant factor c_j (sign included), the
  same for training and new points; c_j is fitted on the training rows and then the
  new points' extensions must agree to 1e-6.
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

datafold = pytest.importorskip("datafold")
import datafold.dynfold as dfold  # noqa: E402
import datafold.pcfold as pfold  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("OOSE_BIN", str(ROOT / "target" / "debug" / "oose"))


def run(*args):
    out = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def read(path):
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def s_curve(n, seed):
    rng = np.random.default_rng(seed)
    t = 3 * np.pi * (rng.random(n) - 0.5)
    return np.column_stack([np.sin(t), 2 * rng.random(n), np.sign(t) * (np.cos(t) - 1)])


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_eigenvalues_and_extension_match_datafold(tmp_path, alpha):
    x = s_curve(1000, 0)
    z = s_curve(200, 1)
    eps, d, t = 0.5, 3, 1.0
    xf, zf, model = tmp_path / "x.csv", tmp_path / "z.csv", tmp_path / "m.oose"
    np.savetxt(xf, x, delimiter=",", header="a,b,c", comments="")
    np.savetxt(zf, z, delimiter=",", header="a,b,c", comments="")
    run("fit", "dmaps", "--input", xf, "--output", model, "--sparsity", "dense",
        "--epsilon", eps, "--alpha", alpha, "--components", d, "--time", t, "--solver", "dense")
    info = dict(line.split(": ", 1) for line in run("info", model).splitlines())
    ours_vals = np.array([float(v) for v in info["eigenvalues"].split(",")])
    run("embedding", model, "--output", tmp_path / "e.csv")
    run("extend", model, "--input", zf, "--output", tmp_path / "z_out.csv")
    ours_train = read(tmp_path / "e.csv")
    ours_new = read(tmp_path / "z_out.csv")

    dm = dfold.DiffusionMaps(
        kernel=pfold.GaussianKernel(epsilon=eps / 2),
        n_eigenpairs=d + 1,
        alpha=alpha,
        time_exponent=t,
        symmetrize_kernel=True,
    ).fit(x)
    order = np.argsort(-dm.eigenvalues_)
    df_vals = dm.eigenvalues_[order]
    assert abs(df_vals[0] - 1) < 1e-10
    np.testing.assert_allclose(ours_vals, df_vals[1:], rtol=0, atol=1e-8)
    print(f"alpha={alpha}: max eigenvalue difference {np.max(np.abs(ours_vals - df_vals[1:])):.1e}")

    df_train = dm.transform(x)[:, order][:, 1:]
    df_new = dm.transform(z)[:, order][:, 1:]
    for j in range(d):
        c = ours_train[:, j] @ df_train[:, j] / (df_train[:, j] @ df_train[:, j])
        train_err = np.max(np.abs(ours_train[:, j] - c * df_train[:, j]))
        new_err = np.max(np.abs(ours_new[:, j] - c * df_new[:, j]))
        scale = np.max(np.abs(ours_new[:, j]))
        print(f"  coordinate {j + 1}: c = {c:.6g}, max |diff| training {train_err:.1e}, "
              f"new {new_err:.1e} (scale {scale:.2g})")
        assert train_err < 1e-6 * scale, (alpha, j, train_err)
        assert new_err < 1e-6 * scale, (alpha, j, new_err)
