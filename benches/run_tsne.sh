#!/usr/bin/env bash
# t-SNE benchmark (issue 19, maths §12): Fashion-MNIST from Debian's
# dataset-fashion-mnist, PCA to 50 dimensions fitted on the training images, then t-SNE.
# oose (release CLI, defaults: FFT gradient and exact kNN graph at this size) against
# openTSNE (FFT, same threads) and scikit-learn (Barnes–Hut),
# in one run: fit time, final KL, trustworthiness(10) and kNN preservation(10) on a 5000
# point sample, transform time and out-of-sample 10-NN accuracy of the test images
# (oose: interpolation and optimize; openTSNE: transform), and the input-space ceiling;
# then oose's transform in process through the Python package (built in release into
# .venv-tsne), as openTSNE's is timed, and one point's latency.
# TSNE_N (default 60000) training images, TSNE_M (default 10000) test images;
# TSNE_SKLEARN=0 skips scikit-learn (the slowest); TSNE_EXACT_N (default 2000) sets the
# size of the gradient comparison (exact, Barnes–Hut, FFT) run by oose. Then the kNN
# graph (exact against NN-descent) and the per-iteration repulsion errors.
. "$(dirname "$0")/common.sh"
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist >/dev/null
fi
oose_env .venv-tsne openTSNE scikit-learn
.venv-tsne/bin/python benches/peers/tsne_suite.py "$tmp" ./target/release/oose \
  "${TSNE_N:-60000}" "${TSNE_M:-10000}" "${TSNE_SKLEARN:-1}" "${TSNE_EXACT_N:-2000}"
# The kNN graph of P (k = 91 at perplexity 30): exact against NN-descent, time and
# recall; the Barnes–Hut and FFT repulsion against the exact one along the descent.
cargo build --release -q -p oose-cli --example knn --example tsne_gradients
echo
./target/release/examples/knn "$tmp/train.npy" 91
if [ -f "$tmp/small.npy" ]; then
  ./target/release/examples/tsne_gradients "$tmp/small.npy" | tail -1
fi
