#!/usr/bin/env bash
# Python-level overhead of transform on 1000 points against the Rust time of the same
# extension (issue 6 target: <= 10 %). Builds the release extension into .venv (run
# scripts/test first for the environment; scripts/test reinstalls the dev build).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "run scripts/test first (it creates .venv)" >&2; exit 1; }
cargo build --release --locked -p oose --example time_extend
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
  .venv/bin/maturin develop --release --locked -m crates/oose-python/Cargo.toml
.venv/bin/python benches/python_overhead.py target/release/examples/time_extend
