"""Probe (maths §11, issue 18): does accumulating the kernel rows' Gram matrix
G = Σ (c − c₀)(c − c₀)ᵀ and forming M = L⁻¹ G L⁻ᵀ once — half the products of the
Nyström sums pass, which now forms every feature vector f = L⁻¹ c first — lose accuracy
in what the fit returns? Paper bound: rounding in G amplified by 1/L_rr² (~1e12 here).

Two cases: a 20000-point Swiss roll (noise 0.05, gaussian, ε = 231.99) with 500 P-greedy
landmarks chosen on a 10000-row sample (429 kept), and 300 points that are all landmarks
(K_PP's smallest pivot 1e-12). Prints the top-10 eigenvalues' and embeddings'
largest relative differences between the two ways (the embedding of the second way
through W = L⁻ᵀ V, without any per-point triangular solve).

usage: .venv/bin/python benches/probes/nystrom_ctc.py   (numpy, scipy, oose)"""

import numpy as np
import scipy.linalg as sl

import oose

D = 10


def kernel(a, b, eps):
    d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    return np.exp(-np.maximum(d2, 0) / eps)


def p_greedy(s, r, eps, tol=1e-12):
    p, piv, rows = np.ones(len(s)), [], np.zeros((r, len(s)))
    for j in range(r):
        i = int(np.argmax(p))
        if p[i] < tol:
            break
        row = (kernel(s[i : i + 1], s, eps)[0] - rows[:j].T @ rows[:j, i]) / np.sqrt(p[i])
        rows[j], p, piv = row, p - row * row, piv + [i]
    return piv


def top(m):
    w, v = np.linalg.eigh((m + m.T) / 2)
    o = np.argsort(w)[::-1][:D]
    v = v[:, o]
    return w[o], v * np.sign(v[np.argmax(abs(v), 0), range(D)])


def compare(c, l, c0):
    n = len(c)
    f = sl.solve_triangular(l, c.T, lower=True).T
    f0 = sl.solve_triangular(l, c0, lower=True)
    fb, cb = f.mean(0), c.mean(0)
    m1 = (f - f0).T @ (f - f0) - n * np.outer(fb - f0, fb - f0)
    g = (c - c0).T @ (c - c0) - n * np.outer(cb - c0, cb - c0)
    m2 = sl.solve_triangular(l, sl.solve_triangular(l, g, lower=True).T, lower=True).T
    (w1, v1), (w2, v2) = top(m1), top(m2)
    y1 = (f - fb) @ v1
    y2 = (c - cb) @ sl.solve_triangular(l, v2, lower=True, trans="T")
    return np.abs(w2 - w1).max() / w1[0], np.abs(y2 - y1).max() / np.abs(y1).max()


x = oose.datasets.swiss_roll(20000, noise=0.05, random_state=2)
eps = 231.99
sample = x[np.random.default_rng(0).choice(len(x), 10000, replace=False)]
p = sample[p_greedy(sample, 500, eps)]
l = np.linalg.cholesky(kernel(p, p, eps))
c = kernel(x, p, eps)
w, y = compare(c, l, c[:1000].mean(0))
print(f"N=20000, r={len(p)}, smallest pivot {np.diag(l).min() ** 2:.1e}: "
      f"eigenvalues {w:.1e}, embedding {y:.1e}")

s = x[:300]
piv = p_greedy(s, 300, eps)
l = np.linalg.cholesky(kernel(s[piv], s[piv], eps))
c = kernel(s, s[piv], eps)
w, y = compare(c, l, c.mean(0))
print(f"N=300, every point a landmark ({len(piv)} kept), smallest pivot "
      f"{np.diag(l).min() ** 2:.1e}: eigenvalues {w:.1e}, embedding {y:.1e}")
