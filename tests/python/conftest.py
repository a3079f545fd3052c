"""Shared helpers: locate the `oose` binary built by `cargo test` and run it."""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def oose_bin():
    path = Path(os.environ.get("OOSE_BIN", ROOT / "target" / "debug" / "oose"))
    if not path.exists():
        pytest.fail(f"{path} not found: build it with `cargo build -p oose-cli` (scripts/test does)")
    return str(path)


@pytest.fixture()
def run(oose_bin):
    def _run(*args):
        out = subprocess.run([oose_bin, *map(str, args)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout

    return _run


def read_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
    return header, np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def swiss_roll(n, noise, seed):
    """maths §10 Swiss roll (numpy's generator; any data will do for agreement tests)."""
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1 + 2 * rng.random(n))
    h = 21 * rng.random(n)
    x = np.column_stack([t * np.cos(t), h, t * np.sin(t)])
    return x + noise * rng.standard_normal((n, 3))


def sign_rule(a, ref):
    """Flips columns of `a` so that each column's largest-|entry| of `ref` is positive."""
    idx = np.argmax(np.abs(ref), axis=0)
    s = np.sign(ref[idx, np.arange(ref.shape[1])])
    return a * s
