"""Exact MVU's reduced program (maths §15) solved by SDPA-GMP (SDPA in 200-bit
arithmetic, pip package `sdpa-multiprecision`): an independent optimum to many more
digits than a double-precision solver reaches, to measure how far oose's objective is
from the true one where oose's own objective gap (2.5e-6 at N = 150) cannot say.

usage: mvu_sdpa_gmp.py POINTS.npy K [EPS [BITS [K_OUT.npy]]]   (points from
`oose dataset swiss-roll`; defaults EPS = 1e-20, BITS = 256; K_OUT: where to write
K = W Y Wᵀ in original units, for a comparison of embeddings)

The program is the one of benches/peers/mvu_cvxpy.py (`reduced_constraints`: the facial
basis and independent edge constraints from an SVD), written in SDPAP's form: minimise cᵀx subject to
Ax − b = 0, x = vec(Y) with Y ⪰ 0; c = −vec(I), so −cᵀx = tr Y = tr K. Squared edge
lengths are divided by their mean for the solve and the objective multiplied back.
Prints one JSON line: objective (primal and dual, original units), relative gap,
primal and dual feasibility errors, SDPA's phase, iterations, seconds."""

import json
import sys
import time

import numpy as np
from scipy import sparse

sys.path.insert(0, "benches/peers")
from mvu_cvxpy import reduced_constraints  # noqa: E402

import sdpap  # noqa: E402


def main():
    X = np.load(sys.argv[1])
    k = int(sys.argv[2])
    eps = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-20
    W, A_ind, b_ind, scale = reduced_constraints(X, k)
    r, rank = W.shape[1], len(b_ind)
    b_ind = b_ind / scale
    c = -np.eye(r).reshape(r * r)
    K = sdpap.SymCone(s=(r,))
    J = sdpap.SymCone(f=rank)
    option = {
        "print": "",
        "epsilonStar": eps,
        "epsilonDash": eps,
        "maxIteration": 300,
        "mpfPrecision": int(sys.argv[4]) if len(sys.argv) > 4 else 256,
        "lambdaStar": 1e3,
    }
    t = time.perf_counter()
    x, y, info, timeinfo, sdpainfo = sdpap.solve(
        sparse.csc_matrix(A_ind), b_ind, sparse.csc_matrix(c).T, K, J, option
    )
    wall = time.perf_counter() - t
    pobj = -info["primalObj"] * scale
    dobj = -info["dualObj"] * scale
    Y = np.asarray(x.todense() if sparse.issparse(x) else x).reshape(r, r)
    w = np.linalg.eigvalsh((Y + Y.T) / 2)
    if len(sys.argv) > 5:
        np.save(sys.argv[5], W @ ((Y + Y.T) / 2 * scale) @ W.T)
    print(json.dumps({
        "n": len(X), "k": k, "r": r, "constraints": rank,
        "phase": str(info.get("phasevalue")), "iterations": sdpainfo.get("iteration"),
        "primal_objective": pobj, "dual_objective": dobj,
        "relative_gap": abs(pobj - dobj) / (1 + abs(pobj) + abs(dobj)),
        "primal_error": sdpainfo.get("primalError"), "dual_error": sdpainfo.get("dualError"),
        "trace_Y": float(np.trace(Y)) * scale, "min_eig_Y": float(w[0]) * scale,
        "seconds": wall,
    }))


if __name__ == "__main__":
    main()
