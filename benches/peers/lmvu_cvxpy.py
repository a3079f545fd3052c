"""Landmark MVU (maths §15) written independently of oose, solved by Clarabel and SCS
through cvxpy: the reference optimum of the test
`landmark_mvu_reaches_the_optimum_two_independent_solvers_find` (crates/oose/tests/mvu.rs).

    python lmvu_cvxpy.py POINTS.npy M [K]

POINTS.npy: e.g. `oose.datasets.s_curve(120, random_state=1)` saved with numpy.save.
Same construction as oose: the symmetric kNN graph of `mvu_cvxpy.graph` (an edge when either end chose the
other), barycentric weights with the regularisation 1e-3·tr(G), landmarks by
farthest-point sampling from the point farthest from the mean, Q = [I; −Φᵤᵤ⁻¹Φᵤₗ],
squared edge lengths divided by their mean; maximise tr(Q L Qᵀ) over L ⪰ 0 with
Σ K = 0 and every edge's length² ≤ dᵢⱼ². Prints tr K in the data's units.
Needs cvxpy (Clarabel and SCS come with it)."""

import sys

import cvxpy as cp
import numpy as np
from mvu_cvxpy import graph, neighbours

x = np.load(sys.argv[1])
m = int(sys.argv[2])
k = int(sys.argv[3]) if len(sys.argv) > 3 else 5
n = len(x)
edges, sq = graph(x, k)
nbrs = neighbours(sq, k)
w = np.zeros((n, n))
for i in range(n):
    z = x[nbrs[i]] - x[i]
    g = z @ z.T
    g += 1e-3 * np.trace(g) * np.eye(k)
    c = np.linalg.solve(g, np.ones(k))
    w[i, nbrs[i]] = c / c.sum()
phi = (np.eye(n) - w).T @ (np.eye(n) - w)
landmarks = [int(np.argmax(((x - x.mean(0)) ** 2).sum(1)))]
near = ((x - x[landmarks[0]]) ** 2).sum(1)
while len(landmarks) < m:
    near[landmarks] = -np.inf
    j = int(np.argmax(near))
    landmarks.append(j)
    near = np.minimum(near, ((x - x[j]) ** 2).sum(1))
free = [i for i in range(n) if i not in set(landmarks)]
q = np.zeros((n, m))
q[landmarks, range(m)] = 1.0
q[free] = -np.linalg.solve(phi[np.ix_(free, free)], phi[np.ix_(free, landmarks)])
d2 = sq[edges[:, 0], edges[:, 1]]
scale = d2.mean()
# Centring: Σ K = vᵀLv = 0 with v = Qᵀ1, so L = V Y Vᵀ with V a basis of v^⊥ and
# G = Q V (the same reduction as oose's; without it Clarabel ends "inaccurate").
v = q.sum(0)
basis = np.linalg.eigh(np.outer(v, v))[1][:, :-1]
g = q @ basis
u = np.array([g[i] - g[j] for i, j in edges])
for solver, opts in (("CLARABEL", {}), ("SCS", {"eps": 1e-9, "max_iters": 200000})):
    y = cp.Variable((m - 1, m - 1), PSD=True)
    cons = [cp.sum(cp.multiply(np.outer(ue, ue), y)) <= b for ue, b in zip(u, d2 / scale)]
    prob = cp.Problem(cp.Maximize(cp.trace(g.T @ g @ y)), cons)
    prob.solve(solver=solver, **opts)
    print(f"{solver}: {prob.status}, tr K = {prob.value * scale:.10f}")
