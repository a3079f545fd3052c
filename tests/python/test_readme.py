"""The Python examples of the READMEs and docs/python.md run as written, give no warning
their text does not announce, and show what their comments say.

A block preceded by ``<!-- not run: reason -->`` is a summary of calls on the reader's
own data; the reason names the tests that run those calls."""

import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).parents[2]
DOCS = [
    ROOT / "README.md",
    ROOT / "docs" / "python.md",
    ROOT / "crates" / "oose-python" / "README.md",
]
NOT_RUN = re.compile(r"<!-- not run: (.+) -->")


def _blocks():
    """(file, line, code, reason not run or None) of every Python block."""
    out = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == "```python":
                start = i + 1
                end = next(j for j in range(start, len(lines)) if lines[j].strip() == "```")
                before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
                reason = NOT_RUN.fullmatch(before.strip())
                code = "\n".join(lines[start:end]) + "\n"
                out.append(
                    (str(path.relative_to(ROOT)), start + 1, code, reason and reason.group(1))
                )
                i = end
            i += 1
    return out


BLOCKS = _blocks()


def _claims():
    """What a block's comments say, checked on the names it leaves behind; keyed by a
    line of the block (each key names exactly one block)."""

    def kpca(ns):
        assert 0 < ns["est"].info_["epsilon"] < np.inf
        assert ns["diag"]["is_novel"].mean() <= 0.03  # same distribution: about α or less

    def mds(ns):
        y, diag = ns["y"], ns["diag"]
        assert abs(y[0, 0]) < 1e-9 and abs(abs(y[0, 1]) - 19.1833) < 1e-4
        assert diag["lambda"][0] == pytest.approx(-32, abs=1e-9) and not diag["unique"][0]

    def eigenmaps(ns):
        ev = ns["est"].laplacian_eigenvalues_
        assert abs(ev[0]) < 1e-10 and np.all(np.diff(ev) >= 0) and ev[1] > 0

    def mvu(ns):
        assert ns["est"].sdp_status_ == "almost-solved"
        assert ns["Y"].shape == (50, 2) and np.isfinite(ns["Y"]).all()

    def tsne(ns):
        assert 0 < ns["est"].kl_divergence_ < 2

    def umap(ns):
        assert ns["back"].shape == (5, 3) and np.all(ns["inv"]["residual"] >= 0)

    def clustering(ns):
        X, est = ns["X"], ns["est"]
        np.testing.assert_array_equal(est.predict(X[:10] + 0.01), est.labels_[:10])
        assert len(set(est.labels_)) == 3

    def python_readme(ns):
        novel = ns["diag"]["is_novel"]
        assert not novel[::2].any() and novel[1::2].all()

    def interpolator(ns):
        back, iso, X = ns["back"], ns["iso"], ns["X"]
        assert np.abs(back.predict(iso.embedding_[:3]) - X[:3]).max() < 1e-6

    return {
        'print(est.info_["epsilon"], diag["is_novel"].mean())': kpca,
        'print(y, diag["lambda"], diag["unique"])': mds,
        "est = oose.LaplacianEigenmaps(n_neighbors=10).fit(X)": eigenmaps,
        "est = oose.MaximumVarianceUnfolding(n_neighbors=5).fit(X[:400])": mvu,
        "print(est.kl_divergence_)": tsne,
        "back, inv = est.inverse_transform(Y[:5], return_diagnostics=True)": umap,
        "print(est.labels_[:10], est.predict(X[:10] + 0.01))": clustering,
        "print(back.predict(iso.embedding_[:3]) - X[:3])": interpolator,
        'diag["is_novel"][:6]': python_readme,
    }


CLAIMS = _claims()
WARNINGS = ("FitWarning", "NoveltyWarning")


def test_every_block_runs_or_says_why_not_and_every_claim_has_its_block():
    assert len(BLOCKS) >= 15
    assert all(reason is None or "test" in reason for *_, reason in BLOCKS)
    for key in CLAIMS:
        assert sum(key in code for _, _, code, _ in BLOCKS) == 1, key


@pytest.mark.parametrize(
    "name,line,code",
    [(n, l, c) for n, l, c, reason in BLOCKS if reason is None],
    ids=[f"{n}:{l}" for n, l, c, reason in BLOCKS if reason is None],
)
def test_block_runs_as_written(name, line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if 'if __name__ == "__main__":' in code:
        # Worker processes re-import the script: run it as one.
        script = tmp_path / "example.py"
        script.write_text(code)
        out = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=600
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert "Warning" not in out.stderr, out.stderr[-3000:]
        return
    ns = {"__name__": "readme_example"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(code, f"{name}:{line}", "exec"), ns)
    announced = [w for w in WARNINGS if w in code]
    unexpected = [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if w.category.__name__ not in announced
    ]
    assert not unexpected, unexpected
    for w in announced:  # an announced warning is given
        assert any(c.category.__name__ == w for c in caught), w
    for key, check in CLAIMS.items():
        if key in code:
            check(ns)
