#!/usr/bin/env bash
# New points' nearest training points (what t-SNE's and UMAP's `interpolation` needs:
# k = 16, maths §12): oose's inverted lists (what models search by from format 9) and
# its graph walk (older files) against maintained approximate-nearest-neighbour
# libraries (hnswlib, faiss) in one run, on Fashion-MNIST from Debian's
# dataset-fashion-mnist, PCA to 50 dimensions fitted on the 60000 training images, the
# 10000 test images as queries; time a query and recall against the exact neighbours,
# on two threads. The peers live in .venv-ann.
. "$(dirname "$0")/common.sh"
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist >/dev/null
fi
if [ ! -x .venv-ann/bin/python ]; then
  python3 -m venv .venv-ann
  .venv-ann/bin/pip install -q numpy scikit-learn hnswlib faiss-cpu
fi
.venv-ann/bin/python -c "
import sys; sys.path.insert(0, 'benches/peers')
from fashion import Data
Data('$tmp', 60000, 10000)"
cargo build --release -q -p oose-cli --example knn
RAYON_NUM_THREADS=2 ./target/release/examples/knn "$tmp/train.npy" 15 "$tmp/test.npy" 16
.venv-ann/bin/python benches/peers/ann_peers.py "$tmp/train.npy" "$tmp/test.npy" 16 2
