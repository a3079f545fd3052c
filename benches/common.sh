# Sourced by benches/run_*.sh: strict mode, the repository root as working directory, a
# temporary directory ($tmp) removed on exit, the release CLI built, and three helpers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p oose-cli

# dataset NAME N SEED FILE [FLAG…]: a built-in data set written by the CLI.
dataset() { ./target/release/oose dataset "$1" --n "$2" --seed "$3" --output "$4" "${@:5}"; }

# criterion BENCH: runs that criterion benchmark (log shown) and sets $facts to the
# OOSE_FACTS line it prints.
criterion() {
  cargo bench -q -p oose-benches --bench "$1" -- --noplot 2>&1 | tee "$tmp/bench.log"
  facts=$(grep OOSE_FACTS "$tmp/bench.log" | tail -1)
}

# oose_env VENV PACKAGE…: the benchmark's own virtual environment VENV, created with the
# packages (and maturin) when missing, with the oose Python package built into it in
# release by maturin (an environment from before gets maturin added if it lacks it).
oose_env() {
  local venv=$1
  shift
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "$@" "maturin>=1.7,<2"
  fi
  [ -x "$venv/bin/maturin" ] || "$venv/bin/pip" install -q "maturin>=1.7,<2"
  VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH" \
    "$venv/bin/maturin" develop --release --locked -q -m crates/oose-python/Cargo.toml
}

# datafold_python: sets PY to .venv-datafold's python (scripts/test creates that
# environment; datafold's pins keep it apart), with pydiffmap added when missing.
datafold_python() {
  PY=.venv-datafold/bin/python
  if [ ! -x "$PY" ]; then
    echo "run scripts/test first (it creates .venv-datafold)" >&2
    exit 1
  fi
  "$PY" -c "import pydiffmap" 2>/dev/null || "$PY" -m pip install --quiet "pydiffmap==0.2.0.1"
}
