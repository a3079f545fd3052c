"""Maximum variance unfolding benchmark (issue 21, maths §15), one run:

1. exact MVU against an independent solve of the same program with cvxpy (Clarabel and
   SCS) at N = 60 and 150 (Swiss roll, k = 6): objectives, embedding Procrustes error,
   times. The peers get the program after the facial reduction, written independently
   in mvu_cvxpy.py (without it Clarabel and SCS end "optimal_inaccurate" and disagree
   with each other by 5 %: the program has no interior). With MVU_GMP=1 also SDPA-GMP
   (multiple precision, the program handed over as its dual): the optimum to ~1e-11,
   at the cost of about twenty minutes at N = 150.
2. exact MVU on a 400-point Swiss roll (k = 5): share of tr K in the top two
   eigenvalues, Procrustes disparity against the roll's true (arc length, height), and
   the Spearman correlation of 1000 new points' first coordinate with their t.
3. landmark MVU, N = 5000, m = 40 (k = 6): the same, with time and the constraint
   violation.

usage: mvu_suite.py"""

import os
import sys
import time
import warnings

import numpy as np
from scipy.spatial import procrustes as similarity_procrustes
from scipy.stats import spearmanr

import oose

sys.path.insert(0, "benches/peers")
from mvu_cvxpy import (  # noqa: E402
    embedding,
    procrustes,
    solve,
    solve_reduced,
    solve_reduced_dual,
)

warnings.simplefilter("ignore")


def roll(n, seed):
    X = oose.datasets.swiss_roll(n, random_state=seed)
    t = np.hypot(X[:, 0], X[:, 2])  # no noise: t = |(t cos t, t sin t)|
    return X, t


def arc_length(t):
    return 0.5 * (t * np.sqrt(1 + t * t) + np.arcsinh(t))


def unrolling(est, X, t, new_seed=1):
    truth = np.c_[arc_length(t), X[:, 1]]
    _, _, disparity = similarity_procrustes(truth, est.embedding_)
    s = est.kernel_spectrum_
    Xn, tn = roll(1000, new_seed)
    rho = abs(spearmanr(est.transform(Xn)[:, 0], tn).statistic)
    return (s[0] + s[1]) / est.objective_, disparity, rho


def fit(n, seed, **params):
    X, t = roll(n, seed)
    t0 = time.perf_counter()
    est = oose.MaximumVarianceUnfolding(**params).fit(X)
    return est, X, t, time.perf_counter() - t0


print("== exact MVU vs cvxpy (Swiss roll, seed 0, k = 6) ==")
for n in (60, 150):
    est, X, t, el = fit(n, 0, n_neighbors=6)
    i = est.info_
    print(
        f"N={n}: oose {el:.3f} s, {i['sdp_status']}, {i['sdp_iterations']} iterations, "
        f"tr K {est.objective_:.9e} (dual {i['dual_objective']:.9e}, objective gap "
        f"{i['objective_gap']:.1e}, max violation {est.max_constraint_violation_:.1e})"
    )
    peers = [
        ("CLARABEL", dict(direct_solve_method="faer", time_limit=600.0)),
        ("SCS", dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=200000, time_limit_secs=600.0)),
    ]
    if os.environ.get("MVU_GMP") == "1":
        # SDPA-GMP through cvxpy, on the program's dual (a multiple-precision solve:
        # about a minute at N = 60 and twenty at N = 150, one core).
        bits = 256 if n <= 60 else 128
        peers.append(("SDPA", dict(epsilonStar=1e-12, epsilonDash=1e-12, mpfPrecision=bits)))
    for solver, opts in peers:
        solve_form = solve_reduced_dual if solver == "SDPA" else solve_reduced
        try:
            K, obj, st, wall, status, r = solve_form(X, 6, solver, **opts)
        except Exception as e:  # a peer that fails is reported, not hidden
            print(f"N={n}: cvxpy {solver} (reduced) failed: {e}")
            continue
        err = procrustes(est.embedding_, embedding(K))
        st = wall if st is None else st  # SDPA reports no solver time of its own
        print(
            f"N={n}: cvxpy {solver} (reduced, Y {r}x{r}) {status}, solver {st:.3f} s "
            f"(wall {wall:.3f} s), tr K {obj:.9e}; relative objective difference "
            f"{abs(obj - est.objective_) / abs(obj):.2e}, Procrustes error "
            f"{err:.2e}; time ratio {st / el:.1f}x"
        )
    if n == 60:
        K, obj, st, wall, status = solve(X, 6, "CLARABEL", direct_solve_method="faer")
        print(
            f"N={n}: cvxpy CLARABEL (unreduced, K {n}x{n}) {status}, solver {st:.3f} s, "
            f"tr K {obj:.9e}; relative objective difference "
            f"{abs(obj - est.objective_) / abs(obj):.2e}"
        )

print("== exact MVU, 400-point Swiss roll (k = 5) ==")
est, X, t, el = fit(400, 0, n_neighbors=5)
top, disp, rho = unrolling(est, X, t)
print(
    f"N=400: {el:.2f} s, {est.sdp_status_}, top-2 share {top:.4f} (target >= 0.95), "
    f"Procrustes disparity vs (arc length, height) {disp:.4f}, Spearman(first coordinate "
    f"of 1000 new points, t) {rho:.4f}, objective gap {est.info_['objective_gap']:.1e}"
)

print("== landmark MVU, N = 5000, m = 40 (k = 6) ==")
est, X, t, el = fit(5000, 0, n_neighbors=6, n_landmarks=40)
top, disp, rho = unrolling(est, X, t)
i = est.info_
print(
    f"N=5000 m=40: {el:.2f} s, {est.sdp_status_}, {i['cutting_plane_rounds']} rounds, "
    f"{i['working_set_edges']} of {i['n_edges']} edges in the last program, max "
    f"violation {est.max_constraint_violation_:.1e}, top-2 share {top:.4f}, Procrustes "
    f"disparity {disp:.4f}, Spearman(1000 new points) {rho:.4f}, objective gap "
    f"{i['objective_gap']:.1e}"
)
