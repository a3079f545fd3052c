"""Thin-plate-spline interpolation against scipy's RBFInterpolator, through the CLI."""
import numpy as np
from scipy.interpolate import RBFInterpolator

from conftest import read_csv


def test_thin_plate_spline_matches_scipy(run, tmp_path):
    rng = np.random.default_rng(3)
    x = rng.random((150, 2)) * 4 - 2
    f = np.column_stack([np.sin(x[:, 0]) * np.cos(2 * x[:, 1]), x[:, 0] ** 2 - x[:, 1]])
    z = rng.random((300, 2)) * 4.4 - 2.2
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "f.npy", f)
    np.save(tmp_path / "z.npy", z)
    model = tmp_path / "tps.oose"
    run("fit", "interpolate", "--input", tmp_path / "x.npy", "--values", tmp_path / "f.npy",
        "--kernel", "thin_plate", "--output", model)
    run("extend", model, "--input", tmp_path / "z.npy", "--output", tmp_path / "out.csv",
        "--diagnostics")
    header, ours = read_csv(tmp_path / "out.csv")
    assert header[:2] == ["c1", "c2"] and "power_function" in header
    theirs = RBFInterpolator(x, f, kernel="thin_plate_spline", degree=1)(z)
    err = np.max(np.abs(ours[:, :2] - theirs))
    print(f"max |oose - scipy| = {err:.2e}")
    assert err < 1e-8 * max(1.0, np.max(np.abs(theirs)))
