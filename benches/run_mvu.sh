#!/usr/bin/env bash
# Maximum variance unfolding (issue 21, maths §15), one run: exact MVU against cvxpy
# (Clarabel, SCS) at N = 60 and 150, exact MVU on 400 points, landmark MVU on 5000
# (benches/peers/mvu_suite.py). oose through its Python package, built in release into
# its own .venv-mvu with the peers.
. "$(dirname "$0")/common.sh"
# MVU_GMP=1 adds SDPA-GMP (pip package sdpa-multiprecision, GPL) as a peer: ~20 min more.
oose_env .venv-mvu cvxpy clarabel scs numpy scipy
if [ "${MVU_GMP:-0}" = 1 ]; then .venv-mvu/bin/pip install -q sdpa-multiprecision; fi
.venv-mvu/bin/python benches/peers/mvu_suite.py
