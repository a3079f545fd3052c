"""Exact MVU (maths §15) solved independently with cvxpy: the same symmetric kNN
graph, K ⪰ 0, Σ K = 0, Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ = dᵢⱼ², maximise tr K. Used by
benches/run_mvu.sh; also importable (`solve`)."""

import time

import cvxpy as cp
import numpy as np


def neighbours(d2, k):
    """Each point's k nearest others (rows of indices), from the squared distances."""
    masked = d2.copy()
    np.fill_diagonal(masked, np.inf)
    return np.argsort(masked, axis=1, kind="stable")[:, :k]


def graph(X, k):
    """Edges (i < j) of the symmetric k-nearest-neighbour graph and squared distances."""
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    nn = neighbours(d2, k)
    edges = sorted({(min(i, j), max(i, j)) for i in range(len(X)) for j in nn[i]})
    return np.array(edges), d2


def solve(X, k, solver, **opts):
    """K, tr K, the solver's own time (s), wall time with cvxpy's compilation (s), status."""
    e, d2 = graph(X, k)
    n = len(X)
    K = cp.Variable((n, n), PSD=True)
    i, j = e[:, 0], e[:, 1]
    lengths = cp.diag(K)[i] + cp.diag(K)[j] - 2 * K[i, j]
    prob = cp.Problem(cp.Maximize(cp.trace(K)), [cp.sum(K) == 0, lengths == d2[i, j]])
    t = time.perf_counter()
    prob.solve(solver=solver, **opts)
    wall = time.perf_counter() - t
    return K.value, prob.value, prob.solver_stats.solve_time, wall, prob.status


def embedding(K, d=2):
    w, v = np.linalg.eigh((K + K.T) / 2)
    top = np.argsort(w)[::-1][:d]
    return v[:, top] * np.sqrt(np.maximum(w[top], 0.0))


def procrustes(A, B):
    """min over orthogonal R of ‖A R − B‖_F / ‖B‖_F."""
    u, _, vt = np.linalg.svd(A.T @ B)
    return np.linalg.norm(A @ (u @ vt) - B) / np.linalg.norm(B)


def facial_basis(X, edges, d2):
    """An orthonormal basis W of what every feasible K acts on, written here from the
    mathematics (maths §15), not from oose's code: the complement of 1 and of the affine
    dependencies of one greedy clique per edge (its two ends, then common neighbours of
    the first end, nearest first, joined to every member so far)."""
    n, dim = X.shape
    adj = [set() for _ in range(n)]
    for i, j in edges:
        adj[i].add(j)
        adj[j].add(i)
    cliques = set()
    for i, j in edges:
        c = [i, j]
        for l in sorted(adj[i], key=lambda l: d2[i, l]):
            if l != j and all(l in adj[m] for m in c):
                c.append(l)
        if len(c) > dim + 1:
            cliques.add(tuple(sorted(c)))
    S = np.full((n, n), 1.0 / n)
    for c in cliques:
        c = list(c)
        A = np.vstack([X[c].T, np.ones(len(c))])  # (dim + 1) × |c|
        _, s, vt = np.linalg.svd(A)
        rank = int((s > 1e-10 * s[0]).sum())
        for a in vt[rank:]:
            S[np.ix_(c, c)] += np.outer(a, a)
    w, v = np.linalg.eigh(S)
    return v[:, w <= 1e-9 * max(w[-1], 1.0)]


def reduced_constraints(X, k):
    """The program over K = W Y Wᵀ (W from `facial_basis`): W, the independent edge
    constraints as rows of A (each a symmetric r×r matrix, flattened) with right-hand
    sides b — the row space of the edge constraints from an SVD: inside the face the
    edges of a clique are linearly dependent, and a conic solver's KKT system needs
    independent rows — and the mean squared edge length (a scale for the solve)."""
    e, d2 = graph(X, k)
    W = facial_basis(X, e, d2)
    r = W.shape[1]
    U = W[e[:, 0]] - W[e[:, 1]]  # m × r: uₑ = Wᵀ(eᵢ − eⱼ)
    A = np.einsum("ea,eb->eab", U, U).reshape(len(e), r * r)
    b = d2[e[:, 0], e[:, 1]]
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    rank = int((s > 1e-10 * s[0]).sum())
    rows = vt[:rank].reshape(rank, r, r)
    A_ind = (0.5 * (rows + rows.transpose(0, 2, 1))).reshape(rank, r * r)  # exact symmetry
    return W, A_ind, (u[:, :rank].T @ b) / s[:rank], b.mean()


def solve_reduced(X, k, solver, **opts):
    """The same program over K = W Y Wᵀ (Y ⪰ 0, `reduced_constraints`): a program with
    an interior, which a general conic solver can solve accurately. Returns K, tr K,
    the solver's time, wall time, status and the size of Y."""
    W, A_ind, b_ind, _ = reduced_constraints(X, k)
    r = W.shape[1]
    Y = cp.Variable((r, r), symmetric=True)
    prob = cp.Problem(
        cp.Maximize(cp.trace(Y)), [Y >> 0, A_ind @ cp.vec(Y, order="C") == b_ind]
    )
    t = time.perf_counter()
    prob.solve(solver=solver, **opts)
    wall = time.perf_counter() - t
    K = W @ Y.value @ W.T
    return K, prob.value, prob.solver_stats.solve_time, wall, prob.status, r


def solve_reduced_dual(X, k, solver, **opts):
    """The reduced program of `solve_reduced` through its dual, a linear matrix
    inequality: minimise bᵀy subject to Σₑ yₑ Aₑ − I ⪰ 0, over one free variable per
    independent constraint (Aₑ and b as in `solve_reduced`, b divided by its mean for
    the solve). Both programs have interior points, so the optimal values agree, and the
    multiplier of the inequality is the optimal Y. This is the shape an SDPA-type
    solver takes with one Schur-complement row per constraint (282 at N = 150, against
    the 4005 entries of Y when cvxpy hands it the primal), which is what makes a
    multiple-precision solve (SDPA-GMP, through `sdpa-multiprecision`) affordable.
    Returns K, tr K, the solver's time, wall time, status and the size of Y."""
    W, A_ind, b_ind, scale = reduced_constraints(X, k)
    r = W.shape[1]
    b_ind = b_ind / scale
    y = cp.Variable(len(b_ind))
    lmi = cp.reshape(A_ind.T @ y, (r, r), order="C") - np.eye(r)
    psd = 0.5 * (lmi + lmi.T) >> 0
    prob = cp.Problem(cp.Minimize(b_ind @ y), [psd])
    t = time.perf_counter()
    prob.solve(solver=solver, **opts)
    wall = time.perf_counter() - t
    Y = 0.5 * (psd.dual_value + psd.dual_value.T) * scale
    return W @ Y @ W.T, prob.value * scale, prob.solver_stats.solve_time, wall, prob.status, r
