#!/usr/bin/env bash
# Maximum variance unfolding (issue 21, maths §15), one run: exact MVU against cvxpy
# (Clarabel, SCS) at N = 60 and 150, exact MVU on 400 points, landmark MVU on 5000
# (benches/peers/mvu_suite.py). oose through its Python package, built in release into
# its own .venv-mvu with the peers.
. "$(dirname "$0")/common.sh"
if [ ! -x .venv-mvu/bin/python ]; then
  python3 -m venv .venv-mvu
  .venv-mvu/bin/pip install -q cvxpy clarabel scs numpy scipy maturin
fi
VIRTUAL_ENV="$PWD/.venv-mvu" PATH="$PWD/.venv-mvu/bin:$PATH" \
  .venv-mvu/bin/maturin develop --release --locked -q -m crates/oose-python/Cargo.toml
.venv-mvu/bin/python benches/peers/mvu_suite.py
