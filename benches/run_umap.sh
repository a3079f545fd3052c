#!/usr/bin/env bash
# UMAP benchmark (issue 20, maths §13): Fashion-MNIST from Debian's
# dataset-fashion-mnist, PCA to 50 dimensions fitted on the training images, then UMAP.
# oose (release CLI, defaults) against umap-learn (seeded, hence one thread, and
# unseeded on every thread), in one run: fit time, trustworthiness(10) and kNN
# preservation(10) on a 5000 point sample, transform time and out-of-sample 10-NN
# accuracy of the test images (oose: interpolation and optimize; umap-learn: transform),
# the input-space ceiling, and the single-point latency through the Python package
# (built in release into .venv-umap).
# UMAP_N (default 60000) training images, UMAP_M (default 10000) test images.
. "$(dirname "$0")/common.sh"
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist >/dev/null
fi
oose_env .venv-umap umap-learn scikit-learn
.venv-umap/bin/python benches/peers/umap_suite.py "$tmp" ./target/release/oose \
  "${UMAP_N:-60000}" "${UMAP_M:-10000}"
